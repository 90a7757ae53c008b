//! Torn writes: the journal cut at every byte offset inside its last record must recover the
//! state synced before that record, whether the file ends there or continues with the zeros
//! of a preallocated tail.

use busbar_store::{FileOptions, FileStorage, Record, Recovered, Storage};
use bytes::Bytes;

use crate::support::{TestDir, insert, key, meta, remove, segment_files, update};

fn only_segment(dir: &std::path::Path) -> std::path::PathBuf {
    let mut segments = segment_files(dir);
    assert_eq!(segments.len(), 1, "{segments:?}");
    segments.pop().unwrap()
}

/// Writes a history, then `last` as its own synced append; returns the journal bytes, where
/// the last record starts, and the states before and after it.
fn journal_with_last_record(last: Record) -> (Vec<u8>, usize, Recovered, Recovered) {
    let dir = TestDir::new("torn-source");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    store
        .append(&[
            insert(1, "first", "s"),
            insert(2, "second", "s"),
            meta("m", Some("v")),
        ])
        .unwrap();
    store.append(&[update(1, "s2"), remove(2)]).unwrap();
    store.sync().unwrap();
    let before = store.recover().unwrap();
    let path = only_segment(dir.path());
    let start = std::fs::metadata(&path).unwrap().len() as usize;
    store.append(&[last]).unwrap();
    store.sync().unwrap();
    let after = store.recover().unwrap();
    drop(store);
    (std::fs::read(&path).unwrap(), start, before, after)
}

/// Cuts the last record at every offset, once with the file ending at the cut and once with
/// zeros after it up to past the record's end (an overwrite of preallocated space that never
/// completed).
fn check_every_cut(last: Record) {
    let (journal, start, before, after) = journal_with_last_record(last);
    assert_ne!(before, after);
    for (cut, zero_tail) in (start..=journal.len()).flat_map(|cut| [(cut, false), (cut, true)]) {
        let dir = TestDir::new("torn-cut");
        let name = "0000000000000001.seg";
        let mut bytes = journal[..cut].to_vec();
        if zero_tail {
            bytes.resize(journal.len() + 4096, 0);
        }
        std::fs::write(dir.path().join(name), &bytes).unwrap();
        let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
        let recovered = store.recover().unwrap();
        let expected = if cut == journal.len() {
            &after
        } else {
            &before
        };
        assert_eq!(
            &recovered,
            expected,
            "cut at {cut} of {}, zero tail {zero_tail}",
            journal.len()
        );
        // The torn bytes (and zeros) are gone for good: new appends follow the valid data.
        let kept = if cut < journal.len() {
            start
        } else {
            journal.len()
        };
        assert_eq!(
            std::fs::metadata(dir.path().join(name)).unwrap().len() as usize,
            kept
        );
        store.append(&[insert(50, "later", "s")]).unwrap();
        store.sync().unwrap();
        drop(store);
        let mut reopened = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
        let recovered = reopened.recover().unwrap();
        assert!(recovered.messages.contains_key(&key(50)), "cut at {cut}");
        assert_eq!(recovered.messages.len(), expected.messages.len() + 1);
    }
}

#[test]
fn cut_inside_last_insert_recovers_previous_state() {
    check_every_cut(insert(3, "the last message body", "its state"));
}

#[test]
fn cut_inside_last_update_recovers_previous_state() {
    check_every_cut(update(1, "a newer state"));
}

#[test]
fn cut_inside_last_meta_recovers_previous_state() {
    check_every_cut(Record::Meta {
        entity: crate::support::ENTITY,
        key: Bytes::from_static(b"m"),
        value: None,
    });
}

#[test]
fn zeroed_tail_is_dropped() {
    let (mut journal, _, _, after) = journal_with_last_record(insert(3, "body", "state"));
    // A file extended but never written (e.g. by a crash after the size was updated).
    journal.extend_from_slice(&[0u8; 100]);
    let dir = TestDir::new("torn-zeros");
    std::fs::write(dir.path().join("0000000000000001.seg"), &journal).unwrap();
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    assert_eq!(store.recover().unwrap(), after);
}
