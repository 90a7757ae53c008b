//! The suite every backend must pass: generic functions over [`Backend`], turned into tests for
//! one backend by `conformance_suite!` (here for `MemoryStorage` and `FileStorage`; the PostgreSQL
//! crate compiles this file into its own tests).

use std::collections::BTreeMap;

use busbar_store::{EntityId, Lsn, MetaKey, Record, Recovered, Storage, StoredMessage};
use bytes::Bytes;

use crate::records::{Backend, ENTITY, compact_fully, insert, key, meta, remove, update};

fn stored(message: &str, state: &str) -> StoredMessage {
    StoredMessage {
        message: Bytes::copy_from_slice(message.as_bytes()),
        state: Bytes::copy_from_slice(state.as_bytes()),
    }
}

fn meta_key(name: &str) -> MetaKey {
    MetaKey {
        entity: ENTITY,
        key: Bytes::copy_from_slice(name.as_bytes()),
    }
}

pub(crate) fn empty_store_recovers_nothing<B: Backend>() {
    let mut backend = B::create(false);
    let recovered = backend.store().recover().unwrap();
    assert_eq!(recovered, Recovered::default());
}

pub(crate) fn synced_records_survive_a_restart<B: Backend>() {
    let mut backend = B::create(false);
    let store = backend.store();
    store
        .append(&[
            insert(1, "m1", "s1"),
            insert(2, "m2", "s2"),
            insert(3, "m3", "s3"),
        ])
        .unwrap();
    store
        .append(&[update(1, "s1b"), remove(2), meta("session", Some("v1"))])
        .unwrap();
    store
        .append(&[meta("gone", Some("x")), meta("gone", None)])
        .unwrap();
    let durable = store.sync().unwrap();
    assert_eq!(durable, Lsn(8));
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    let expected_messages =
        BTreeMap::from([(key(1), stored("m1", "s1b")), (key(3), stored("m3", "s3"))]);
    assert_eq!(recovered.messages, expected_messages);
    assert_eq!(
        recovered.meta,
        BTreeMap::from([(meta_key("session"), Bytes::from_static(b"v1"))])
    );
    assert_eq!(recovered.high_water, BTreeMap::from([(ENTITY, 3)]));
    assert_eq!(recovered.durable, durable);
}

pub(crate) fn recover_excludes_unsynced_records<B: Backend>() {
    let mut backend = B::create(false);
    let store = backend.store();
    store.append(&[insert(1, "m1", "s1")]).unwrap();
    store.sync().unwrap();
    store.append(&[insert(2, "m2", "s2"), remove(1)]).unwrap();
    let recovered = store.recover().unwrap();
    assert_eq!(
        recovered.messages,
        BTreeMap::from([(key(1), stored("m1", "s1"))])
    );
    assert_eq!(recovered.durable, Lsn(1));
}

pub(crate) fn positions_keep_increasing_across_restarts<B: Backend>() {
    let mut backend = B::create(false);
    assert_eq!(backend.store().append(&[]).unwrap(), Lsn(0));
    let first = backend.store().append(&[insert(1, "a", "b")]).unwrap();
    backend.store().sync().unwrap();
    backend.restart();
    let second = backend.store().append(&[insert(2, "a", "b")]).unwrap();
    assert!(second > first, "{second:?} after {first:?}");
    assert_eq!(backend.store().sync().unwrap(), second);
}

pub(crate) fn unknown_keys_in_updates_and_removes_are_ignored<B: Backend>() {
    let mut backend = B::create(false);
    let store = backend.store();
    store
        .append(&[update(9, "x"), remove(8), meta("never", None)])
        .unwrap();
    store.append(&[insert(1, "m", "s")]).unwrap();
    store.sync().unwrap();
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    assert_eq!(
        recovered.messages,
        BTreeMap::from([(key(1), stored("m", "s"))])
    );
    assert!(recovered.meta.is_empty());
}

pub(crate) fn high_water_survives_removal_and_compaction<B: Backend>() {
    let mut backend = B::create(true);
    let store = backend.store();
    for sequence in 1..=200 {
        store
            .append(&[insert(sequence, "message body padding", "state")])
            .unwrap();
        store.append(&[remove(sequence)]).unwrap();
        store.sync().unwrap();
        store.compact().unwrap();
    }
    // Enough later writes that the segment holding the last insert is compacted away too.
    for filler in 0..300 {
        store
            .append(&[meta("filler", Some(&format!("{filler:08}")))])
            .unwrap();
        store.sync().unwrap();
        store.compact().unwrap();
    }
    compact_fully(store);
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    assert!(recovered.messages.is_empty());
    assert_eq!(recovered.high_water, BTreeMap::from([(ENTITY, 200)]));
}

pub(crate) fn compaction_preserves_live_state<B: Backend>() {
    let mut backend = B::create(true);
    let store = backend.store();
    let other = EntityId(2);
    for sequence in 1..=300i64 {
        let mut batch = vec![insert(sequence, &format!("message {sequence}"), "fresh")];
        if sequence % 3 != 0 {
            batch.push(remove(sequence - 1));
        }
        if sequence % 5 == 0 {
            batch.push(update(sequence, &format!("updated {sequence}")));
        }
        batch.push(meta(
            &format!("k{}", sequence % 7),
            Some(&format!("v{sequence}")),
        ));
        batch.push(busbar_store::Record::Insert {
            key: busbar_store::MessageKey {
                entity: other,
                sequence: sequence * 10,
            },
            message: Bytes::from_static(b"other"),
            state: Bytes::new(),
        });
        batch.push(busbar_store::Record::Remove {
            key: busbar_store::MessageKey {
                entity: other,
                sequence: sequence * 10,
            },
        });
        store.append(&batch).unwrap();
        store.sync().unwrap();
        if sequence % 10 == 0 {
            store.compact().unwrap();
        }
    }
    let before = store.recover().unwrap();
    compact_fully(store);
    let after_compaction = store.recover().unwrap();
    assert_eq!(after_compaction.messages, before.messages);
    assert_eq!(after_compaction.meta, before.meta);
    assert_eq!(after_compaction.high_water, before.high_water);
    backend.restart();
    let after_restart = backend.store().recover().unwrap();
    assert_eq!(after_restart.messages, before.messages);
    assert_eq!(after_restart.meta, before.meta);
    assert_eq!(
        after_restart.high_water,
        BTreeMap::from([(ENTITY, 300), (other, 3000)])
    );
    assert_eq!(after_restart.meta.len(), 7);
}

/// A message at Service Bus Premium's largest limit (100 MiB), with room for its envelope.
const LARGEST_MESSAGE: usize = 100 * 1024 * 1024 + 64 * 1024;

pub(crate) fn a_message_of_the_largest_size_survives_a_restart_whole<B: Backend>() {
    let mut backend = B::create(false);
    let message = Bytes::from(vec![0x5a; LARGEST_MESSAGE]);
    let store = backend.store();
    store
        .append(&[
            Record::Insert {
                key: key(1),
                message: message.clone(),
                state: Bytes::from_static(b"s1"),
            },
            insert(2, "small", "s2"),
        ])
        .unwrap();
    store.sync().unwrap();
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    assert!(
        recovered.messages[&key(1)].message == message,
        "recovered changed"
    );
    assert_eq!(recovered.messages[&key(2)], stored("small", "s2"));
    let read = backend.store().reader().unwrap().read(&[key(1)]).unwrap();
    assert!(read[0].as_ref() == Some(&message), "read back changed");
}

/// Declares one `#[test]` per suite function, run against `$backend`.
macro_rules! conformance_suite {
    ($backend:ty) => {
        #[test]
        fn empty_store_recovers_nothing() {
            $crate::conformance::empty_store_recovers_nothing::<$backend>()
        }
        #[test]
        fn synced_records_survive_a_restart() {
            $crate::conformance::synced_records_survive_a_restart::<$backend>()
        }
        #[test]
        fn recover_excludes_unsynced_records() {
            $crate::conformance::recover_excludes_unsynced_records::<$backend>()
        }
        #[test]
        fn positions_keep_increasing_across_restarts() {
            $crate::conformance::positions_keep_increasing_across_restarts::<$backend>()
        }
        #[test]
        fn unknown_keys_in_updates_and_removes_are_ignored() {
            $crate::conformance::unknown_keys_in_updates_and_removes_are_ignored::<$backend>()
        }
        #[test]
        fn high_water_survives_removal_and_compaction() {
            $crate::conformance::high_water_survives_removal_and_compaction::<$backend>()
        }
        #[test]
        fn compaction_preserves_live_state() {
            $crate::conformance::compaction_preserves_live_state::<$backend>()
        }
        #[test]
        fn a_message_of_the_largest_size_survives_a_restart_whole() {
            $crate::conformance::a_message_of_the_largest_size_survives_a_restart_whole::<$backend>(
            )
        }
    };
}
pub(crate) use conformance_suite;
