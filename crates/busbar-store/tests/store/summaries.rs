//! `FileStorage` segment summaries: a restart opened with an index part reads sealed
//! segments' summaries instead of their bodies, falls back to the segment when a summary is
//! damaged, and compaction deletes a summary with its segment.

use std::path::{Path, PathBuf};

use busbar_store::{FileOptions, FileStorage, Recovered, Storage, StoreError};

use crate::records::{compact_fully, insert, meta, remove, update};
use crate::support::{TestDir, files_ending, first_bytes, segment_files};

const OPTIONS: FileOptions = FileOptions {
    segment_size: 16 * 1024,
    compact_dead_percent: 50,
};

/// 200 messages of 1 KiB over a dozen segments, with updates, metadata and removals.
fn fill(store: &mut FileStorage) {
    let body = "b".repeat(1024);
    for sequence in 1..=200 {
        store
            .append(&[
                insert(sequence, &format!("{sequence:03}{body}"), "new"),
                meta("cursor", Some(&sequence.to_string())),
            ])
            .unwrap();
        if sequence % 10 == 0 {
            store.append(&[update(sequence, "delivered once")]).unwrap();
        }
        if sequence % 3 == 0 {
            store.append(&[remove(sequence)]).unwrap();
        }
    }
    store.sync().unwrap();
}

fn summary_files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, "sum")
}

/// The journal filled, closed (which waits for its summaries), and the state a full recovery
/// finds, cut to the index part.
fn filled_journal(name: &str) -> (TestDir, Recovered) {
    let dir = TestDir::new(name);
    let mut store = FileStorage::open_with_index(dir.path(), OPTIONS, first_bytes).unwrap();
    fill(&mut store);
    let mut expected = store.recover().unwrap();
    for stored in expected.messages.values_mut() {
        stored.message = first_bytes(&stored.message);
    }
    drop(store);
    (dir, expected)
}

/// Flips a byte in the middle of each sealed segment, where a message body is.
fn damage_sealed_bodies(dir: &Path) {
    let segments = segment_files(dir);
    for path in &segments[..segments.len() - 1] {
        let mut data = std::fs::read(path).unwrap();
        let middle = data.len() / 2;
        data[middle] ^= 0xff;
        std::fs::write(path, data).unwrap();
    }
}

#[test]
fn a_restart_reads_the_summaries_of_sealed_segments_not_their_bodies() {
    let (dir, expected) = filled_journal("summaries-read");
    let segments = segment_files(dir.path()).len();
    assert!(segments > 10, "{segments} segments");
    // Every sealed segment has one; the head does not.
    assert_eq!(summary_files(dir.path()).len(), segments - 1);
    damage_sealed_bodies(dir.path());
    // Reading a damaged body is refused, so neither recovery below read one.
    match FileStorage::open(dir.path(), OPTIONS) {
        Err(StoreError::Corrupt { .. }) => {}
        other => panic!("a full scan read the damaged bodies: {other:?}"),
    }
    let mut store = FileStorage::open_with_index(dir.path(), OPTIONS, first_bytes).unwrap();
    let recovered = store.recover_keeping(first_bytes).unwrap();
    assert_eq!(recovered.messages, expected.messages);
    assert_eq!(recovered.meta, expected.meta);
    assert_eq!(recovered.high_water, expected.high_water);
    assert_eq!(recovered.messages.len(), 134);
}

#[test]
fn a_damaged_summary_is_ignored_and_its_segment_read() {
    let (dir, expected) = filled_journal("summaries-damaged");
    let summaries = summary_files(dir.path());
    let mut data = std::fs::read(&summaries[2]).unwrap();
    let last = data.len() - 1;
    data[last] ^= 0xff;
    std::fs::write(&summaries[2], data).unwrap();
    std::fs::remove_file(&summaries[4]).unwrap();
    let mut store = FileStorage::open_with_index(dir.path(), OPTIONS, first_bytes).unwrap();
    let recovered = store.recover_keeping(first_bytes).unwrap();
    assert_eq!(recovered.messages, expected.messages);
    assert_eq!(recovered.meta, expected.meta);
    drop(store);
    // The missing one is written again in the background, before the store is closed.
    assert!(summaries[4].exists());
}

#[test]
fn compaction_deletes_a_summary_with_its_segment() {
    let (dir, _) = filled_journal("summaries-compacted");
    let mut store = FileStorage::open_with_index(dir.path(), OPTIONS, first_bytes).unwrap();
    let live: Vec<_> = store
        .recover()
        .unwrap()
        .messages
        .keys()
        .map(|key| remove(key.sequence))
        .collect();
    store.append(&live).unwrap();
    store.sync().unwrap();
    compact_fully(&mut store);
    drop(store);
    let segments = segment_files(dir.path());
    assert!(segments.len() <= 2, "{segments:?}");
    for summary in summary_files(dir.path()) {
        assert!(
            summary.with_extension("seg").exists(),
            "{} outlived its segment",
            summary.display()
        );
    }
    let mut store = FileStorage::open_with_index(dir.path(), OPTIONS, first_bytes).unwrap();
    assert!(
        store
            .recover_keeping(first_bytes)
            .unwrap()
            .messages
            .is_empty()
    );
}
