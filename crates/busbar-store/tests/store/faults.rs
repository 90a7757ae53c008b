//! Failure paths: fault switches of `MemoryStorage` and a provoked write failure of
//! `FileStorage`. A failure poisons the store and nothing more is acknowledged.

use busbar_store::{FileOptions, FileStorage, Lsn, MemoryStorage, Storage, StoreError};

use crate::records::{insert, key};
use crate::support::TestDir;

fn assert_poisoned<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    match result {
        Err(StoreError::Poisoned { .. }) => {}
        other => panic!("expected Poisoned, got {other:?}"),
    }
}

#[test]
fn failed_sync_reports_nothing_durable_and_poisons() {
    let mut store = MemoryStorage::new();
    store.append(&[insert(1, "a", "s")]).unwrap();
    assert_eq!(store.sync().unwrap(), Lsn(1));
    store.append(&[insert(2, "b", "s")]).unwrap();
    store.fail_next_sync();
    assert!(matches!(store.sync(), Err(StoreError::InjectedFault(_))));
    assert_poisoned(store.sync());
    assert_poisoned(store.append(&[insert(3, "c", "s")]));
    assert_poisoned(store.recover());
    assert_poisoned(store.compact());
    let mut restarted = store.restart();
    let recovered = restarted.recover().unwrap();
    assert_eq!(recovered.durable, Lsn(1));
    assert_eq!(recovered.messages.keys().collect::<Vec<_>>(), [key(1)]);
}

#[test]
fn failed_append_stores_nothing_and_poisons() {
    let mut store = MemoryStorage::new();
    store.fail_next_append();
    assert!(matches!(
        store.append(&[insert(1, "a", "s")]),
        Err(StoreError::InjectedFault(_))
    ));
    assert_poisoned(store.sync());
    let mut restarted = store.restart();
    assert!(restarted.recover().unwrap().messages.is_empty());
    // A restart clears the poison.
    restarted.append(&[insert(1, "a", "s")]).unwrap();
    assert_eq!(restarted.sync().unwrap(), Lsn(1));
}

#[test]
fn crash_after_records_loses_everything_unsynced() {
    let mut store = MemoryStorage::new();
    store.append(&[insert(1, "a", "s")]).unwrap();
    store.sync().unwrap();
    store.crash_after_records(2);
    store.append(&[insert(2, "b", "s")]).unwrap();
    assert!(
        store
            .append(&[insert(3, "c", "s"), insert(4, "d", "s")])
            .is_err()
    );
    assert_poisoned(store.sync());
    let mut restarted = store.restart();
    let recovered = restarted.recover().unwrap();
    assert_eq!(recovered.messages.keys().collect::<Vec<_>>(), [key(1)]);
    assert_eq!(recovered.durable, Lsn(1));
}

#[test]
fn file_write_failure_poisons() {
    let dir = TestDir::new("fault-write");
    let options = FileOptions {
        segment_size: 256,
        compact_dead_percent: 50,
    };
    let mut store = FileStorage::open(dir.path(), options).unwrap();
    store.append(&[insert(1, "a", "s")]).unwrap();
    let durable = store.sync().unwrap();
    // With the directory gone, starting the next segment fails.
    std::fs::remove_dir_all(dir.path()).unwrap();
    let body = "x".repeat(300);
    let error = store.append(&[insert(2, &body, "s")]).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error:?}");
    assert_poisoned(store.sync());
    assert_poisoned(store.append(&[insert(3, "c", "s")]));
    assert_poisoned(store.compact());
    assert!(durable < Lsn(2));
}

#[test]
fn oversized_record_is_refused_without_poisoning() {
    let dir = TestDir::new("fault-size");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    let huge = bytes::Bytes::from(vec![0u8; (1 << 30) + 1]);
    let error = store
        .append(&[busbar_store::Record::Update {
            key: key(1),
            state: huge,
        }])
        .unwrap_err();
    assert!(
        matches!(error, StoreError::RecordTooLarge { .. }),
        "{error:?}"
    );
    store.append(&[insert(1, "a", "s")]).unwrap();
    assert_eq!(store.sync().unwrap(), Lsn(1));
}

#[test]
fn a_volatile_store_counts_positions_keeps_nothing_and_still_fails_on_demand() {
    let mut store = MemoryStorage::volatile();
    assert_eq!(
        store
            .append(&[insert(1, "a", "s"), insert(2, "b", "s")])
            .unwrap(),
        Lsn(2)
    );
    assert_eq!(store.sync().unwrap(), Lsn(2));
    assert!(!store.compact().unwrap().did_work());
    let recovered = store.recover().unwrap();
    assert!(recovered.messages.is_empty());
    assert!(recovered.high_water.is_empty());
    assert_eq!(recovered.durable, Lsn(2));
    let mut restarted = store.restart();
    assert!(restarted.recover().unwrap().messages.is_empty());
    // Positions go on after a restart, and the fault switches work as on the recoverable store.
    assert_eq!(restarted.append(&[insert(3, "c", "s")]).unwrap(), Lsn(3));
    restarted.fail_next_sync();
    assert!(matches!(
        restarted.sync(),
        Err(StoreError::InjectedFault(_))
    ));
    assert_poisoned(restarted.append(&[insert(4, "d", "s")]));
}
