//! Preallocation: the zeros `FileStorage::preallocate` writes ahead of the head read as the end
//! of the log, never reach a sealed segment, and what follows them is never taken for records.

use busbar_store::{FileOptions, FileStorage, Storage};

use crate::records::{insert, key};
use crate::support::{TestDir, segment_files};

fn file_len(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn zero_tail_is_cut_on_open_and_appends_continue_after_the_data() {
    let dir = TestDir::new("prealloc-reopen");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    store.append(&[insert(1, "first", "s")]).unwrap();
    store.sync().unwrap();
    store.preallocate().unwrap();
    // Into the preallocated space: the file does not grow.
    store.append(&[insert(2, "second", "s")]).unwrap();
    store.sync().unwrap();
    let segment = segment_files(dir.path()).pop().unwrap();
    let data = store.disk_usage();
    assert!(file_len(&segment) > data, "no zeros were preallocated");
    let state = store.recover().unwrap();
    drop(store);

    let mut reopened = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    assert_eq!(reopened.recover().unwrap(), state);
    assert_eq!(file_len(&segment), data);
    reopened.append(&[insert(3, "third", "s")]).unwrap();
    reopened.sync().unwrap();
    drop(reopened);
    let recovered = FileStorage::open(dir.path(), FileOptions::default())
        .unwrap()
        .recover()
        .unwrap();
    assert_eq!(recovered.messages.len(), 3);
}

#[test]
fn records_after_zeros_are_not_recovered() {
    let dir = TestDir::new("prealloc-garbage");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    store.append(&[insert(1, "first", "s")]).unwrap();
    store.sync().unwrap();
    let state = store.recover().unwrap();
    let data = store.disk_usage();
    drop(store);
    // Zeros, then a whole valid journal's worth of frames: only a write that never completed
    // can put anything after zeros, so none of it counts.
    let source = TestDir::new("prealloc-garbage-source");
    let mut other = FileStorage::open(source.path(), FileOptions::default()).unwrap();
    other.append(&[insert(7, "later", "s")]).unwrap();
    other.sync().unwrap();
    drop(other);
    let other_journal = std::fs::read(segment_files(source.path()).pop().unwrap()).unwrap();
    let segment = segment_files(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.resize(bytes.len() + 512, 0);
    bytes.extend_from_slice(&other_journal[24..]);
    bytes.extend_from_slice(b"garbage");
    std::fs::write(&segment, &bytes).unwrap();

    let mut reopened = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    let recovered = reopened.recover().unwrap();
    assert_eq!(recovered, state);
    assert!(!recovered.messages.contains_key(&key(7)));
    assert_eq!(file_len(&segment), data);
}

#[test]
fn sealed_segments_are_cut_back_to_their_data() {
    let options = FileOptions {
        segment_size: 4096,
        compact_dead_percent: 100,
    };
    let dir = TestDir::new("prealloc-rotate");
    let mut store = FileStorage::open(dir.path(), options).unwrap();
    for sequence in 1..=60 {
        store
            .append(&[insert(sequence, &"x".repeat(200), "s")])
            .unwrap();
        store.sync().unwrap();
        store.preallocate().unwrap();
    }
    let segments = segment_files(dir.path());
    assert!(segments.len() > 2, "{segments:?}");
    // The head stays within the segment size, zeros included.
    assert_eq!(file_len(segments.last().unwrap()), 4096);
    let state = store.recover().unwrap();
    drop(store);
    // A sealed segment with a zero tail would be corruption on open.
    let mut reopened = FileStorage::open(dir.path(), options).unwrap();
    assert_eq!(reopened.recover().unwrap(), state);
    assert_eq!(state.messages.len(), 60);
}
