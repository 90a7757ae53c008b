//! `FileStorage` compaction: disk use follows the live backlog, and a crash between the
//! rewrite and the deletion of a segment recovers the same state.

use busbar_store::{FileOptions, FileStorage, Storage};

use crate::records::{ENTITY, compact_fully, insert, key, meta, remove, update};
use crate::support::{TestDir, segment_files};

const OPTIONS: FileOptions = FileOptions {
    segment_size: 64 * 1024,
    compact_dead_percent: 50,
};

/// 1000 messages of 1 KiB with updates and metadata, then all but every 100th removed.
fn fill_then_settle(store: &mut FileStorage) {
    let body = "x".repeat(1024);
    for sequence in 1..=1000 {
        store
            .append(&[
                insert(sequence, &body, "new"),
                meta("cursor", Some(&sequence.to_string())),
            ])
            .unwrap();
        if sequence % 10 == 0 {
            store.append(&[update(sequence, "delivered once")]).unwrap();
        }
    }
    store.sync().unwrap();
    let removals: Vec<_> = (1..=1000).filter(|s| s % 100 != 0).map(remove).collect();
    store.append(&removals).unwrap();
    store.sync().unwrap();
}

#[test]
fn disk_use_follows_the_live_backlog() {
    let dir = TestDir::new("compact-usage");
    let mut store = FileStorage::open(dir.path(), OPTIONS).unwrap();
    fill_then_settle(&mut store);
    let before = store.disk_usage();
    assert!(before > 1_000_000, "{before}");
    compact_fully(&mut store);
    let after = store.disk_usage();
    // Ten live messages of 1 KiB; at most the head and one partly live segment remain.
    assert!(
        after < 3 * OPTIONS.segment_size,
        "{after} bytes after compaction"
    );
    assert_eq!(segment_files(dir.path()).len(), store.segment_count());
    let expected = store.recover().unwrap();
    drop(store);
    let mut reopened = FileStorage::open(dir.path(), OPTIONS).unwrap();
    let recovered = reopened.recover().unwrap();
    assert_eq!(recovered.messages, expected.messages);
    assert_eq!(recovered.messages.len(), 10);
    assert_eq!(&recovered.messages[&key(100)].state[..], b"delivered once");
    assert_eq!(recovered.high_water[&ENTITY], 1000);
    assert_eq!(recovered.meta.len(), 1);
}

#[test]
fn crash_between_rewrite_and_delete_recovers_the_same_state() {
    let dir = TestDir::new("compact-crash");
    let mut store = FileStorage::open(dir.path(), OPTIONS).unwrap();
    fill_then_settle(&mut store);
    let expected = store.recover().unwrap();
    let mut steps = 0;
    loop {
        // Keep a copy of the oldest segment: the step deletes it after rewriting.
        let oldest = segment_files(dir.path())[0].clone();
        let saved = std::fs::read(&oldest).unwrap();
        let report = store.compact().unwrap();
        if !report.did_work() {
            break;
        }
        steps += 1;
        // As if the deletion never reached the disk.
        let survivor = TestDir::new("compact-crash-copy");
        for path in segment_files(dir.path()) {
            std::fs::copy(&path, survivor.path().join(path.file_name().unwrap())).unwrap();
        }
        if !oldest.exists() {
            std::fs::write(survivor.path().join(oldest.file_name().unwrap()), saved).unwrap();
        }
        let mut crashed = FileStorage::open(survivor.path(), OPTIONS).unwrap();
        let recovered = crashed.recover().unwrap();
        assert_eq!(recovered.messages, expected.messages, "after step {steps}");
        assert_eq!(recovered.meta, expected.meta);
        assert_eq!(recovered.high_water, expected.high_water);
        assert!(steps < 100);
    }
    assert!(steps > 5, "{steps} steps");
}
