//! Torn writes: the journal cut at every byte offset inside its last append must recover the
//! state synced before that append (all of an append or none of it, however many records),
//! whether the file ends there or continues with the zeros of a preallocated tail.

use busbar_store::{FileOptions, FileStorage, Record, Recovered, Storage};
use bytes::Bytes;

use crate::records::{insert, key, meta, remove, update};
use crate::support::{TestDir, segment_files};

fn only_segment(dir: &std::path::Path) -> std::path::PathBuf {
    let mut segments = segment_files(dir);
    assert_eq!(segments.len(), 1, "{segments:?}");
    segments.pop().unwrap()
}

/// Writes a history, then `last` as its own synced append; returns the journal bytes, where
/// the last append starts, and the states before and after it.
fn journal_with_last_append(last: &[Record]) -> (Vec<u8>, usize, Recovered, Recovered) {
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
    store.append(last).unwrap();
    store.sync().unwrap();
    let after = store.recover().unwrap();
    drop(store);
    (std::fs::read(&path).unwrap(), start, before, after)
}

/// Cuts the last append at every offset, once with the file ending at the cut and once with
/// zeros after it up to past the append's end (an overwrite of preallocated space that never
/// completed).
fn check_every_cut(last: &[Record]) {
    let (journal, start, before, after) = journal_with_last_append(last);
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
    check_every_cut(&[insert(3, "the last message body", "its state")]);
}

#[test]
fn cut_inside_last_update_recovers_previous_state() {
    check_every_cut(&[update(1, "a newer state")]);
}

#[test]
fn cut_inside_last_meta_recovers_previous_state() {
    check_every_cut(&[Record::Meta {
        entity: crate::records::ENTITY,
        key: Bytes::from_static(b"m"),
        value: None,
    }]);
}

#[test]
fn cut_anywhere_inside_a_multi_record_append_recovers_none_of_it() {
    // As a topic send stores its copies: every record of the append, or none.
    check_every_cut(&[
        insert(3, "copy for one subscription", "s"),
        insert(4, "copy for another", "s"),
        update(1, "and a settlement"),
    ]);
}

#[test]
fn a_version_1_journal_still_reads() {
    let dir = TestDir::new("torn-v1");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    // One record per append: no group frames, the same frames version 1 wrote.
    for record in [
        insert(1, "a", "s"),
        insert(2, "b", "s"),
        update(1, "s2"),
        remove(2),
    ] {
        store.append(&[record]).unwrap();
    }
    store.sync().unwrap();
    let expected = store.recover().unwrap();
    drop(store);
    let path = only_segment(dir.path());
    let mut journal = std::fs::read(&path).unwrap();
    journal[8..12].copy_from_slice(&1u32.to_le_bytes());
    let crc = crc32c::crc32c(&journal[..20]);
    journal[20..24].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &journal).unwrap();
    let mut reopened = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    assert_eq!(reopened.recover().unwrap(), expected);
}

#[test]
fn zeroed_tail_is_dropped() {
    let (mut journal, _, _, after) = journal_with_last_append(&[insert(3, "body", "state")]);
    // A file extended but never written (e.g. by a crash after the size was updated).
    journal.extend_from_slice(&[0u8; 100]);
    let dir = TestDir::new("torn-zeros");
    std::fs::write(dir.path().join("0000000000000001.seg"), &journal).unwrap();
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    assert_eq!(store.recover().unwrap(), after);
}
