//! The shared suite's reads: messages read back by key and scanned by sequence through a
//! backend's `MessageReader`, across updates, removals, compaction and restarts.

use busbar_store::{EntityId, MessageKey, MessageReader, Record, Storage};
use bytes::Bytes;

use crate::records::{Backend, ENTITY, compact_fully, insert, key, remove, update};

fn text(message: &str) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(message.as_bytes()))
}

/// The sequence numbers a scan of `entity` from `from` returns.
fn scanned(reader: &dyn MessageReader, entity: EntityId, from: i64, limit: usize) -> Vec<i64> {
    reader
        .scan(entity, from, limit)
        .unwrap()
        .into_iter()
        .map(|(sequence, _)| sequence)
        .collect()
}

pub(crate) fn reads_find_live_messages_by_key_and_by_scan<B: Backend>() {
    let mut backend = B::create(false);
    let reader = backend.store().reader().unwrap();
    let store = backend.store();
    store
        .append(&[
            insert(1, "m1", "s1"),
            insert(2, "m2", "s2"),
            insert(3, "m3", "s3"),
            insert(5, "m5", "s5"),
        ])
        .unwrap();
    store.append(&[update(1, "s1b"), remove(2)]).unwrap();
    store.sync().unwrap();
    let read = reader.read(&[key(3), key(2), key(1), key(4)]).unwrap();
    assert_eq!(read, vec![text("m3"), None, text("m1"), None]);
    assert_eq!(reader.read(&[]).unwrap(), Vec::<Option<Bytes>>::new());
    let all = reader.scan(ENTITY, 0, 100).unwrap();
    let expected = vec![(1, text("m1")), (3, text("m3")), (5, text("m5"))];
    let all: Vec<(i64, Option<Bytes>)> = all.into_iter().map(|(s, m)| (s, Some(m))).collect();
    assert_eq!(all, expected);
    assert_eq!(scanned(&*reader, ENTITY, 2, 1), vec![3]);
    assert_eq!(scanned(&*reader, ENTITY, 4, 10), vec![5]);
    assert_eq!(scanned(&*reader, ENTITY, 6, 10), Vec::<i64>::new());
    assert_eq!(scanned(&*reader, EntityId(2), 0, 10), Vec::<i64>::new());
}

pub(crate) fn reads_keep_finding_messages_through_compaction_and_restart<B: Backend>() {
    let mut backend = B::create(true);
    let reader = backend.store().reader().unwrap();
    let store = backend.store();
    // Every tenth message stays: the rest is removed, so compaction moves the survivors.
    for sequence in 1..=400i64 {
        let mut batch = vec![insert(sequence, &format!("message {sequence}"), "s")];
        if sequence % 10 != 1 {
            batch.push(remove(sequence));
        }
        store.append(&batch).unwrap();
        store.sync().unwrap();
        if sequence % 50 == 0 {
            store.compact().unwrap();
        }
    }
    compact_fully(store);
    let live: Vec<i64> = (1..=400).filter(|s| s % 10 == 1).collect();
    let keys: Vec<MessageKey> = live.iter().map(|&s| key(s)).collect();
    let expected: Vec<Option<Bytes>> = live.iter().map(|s| text(&format!("message {s}"))).collect();
    assert_eq!(reader.read(&keys).unwrap(), expected);
    assert_eq!(scanned(&*reader, ENTITY, 0, usize::MAX), live);
    backend.restart();
    let reader = backend.store().reader().unwrap();
    assert_eq!(reader.read(&keys).unwrap(), expected);
    assert_eq!(scanned(&*reader, ENTITY, 100, 3), vec![101, 111, 121]);
}

pub(crate) fn a_reader_on_another_thread_reads_while_the_writer_compacts<B: Backend>() {
    let mut backend = B::create(true);
    let reader = backend.store().reader().unwrap();
    let kept = key(0);
    backend
        .store()
        .append(&[insert(0, "kept across compactions", "s")])
        .unwrap();
    backend.store().sync().unwrap();
    let reads = std::thread::spawn(move || {
        (0..300)
            .map(|_| reader.read(&[kept]).unwrap())
            .all(|read| read == vec![text("kept across compactions")])
    });
    let store = backend.store();
    for sequence in 1..=300i64 {
        store
            .append(&[
                Record::Insert {
                    key: key(sequence),
                    message: Bytes::from(vec![7u8; 100]),
                    state: Bytes::new(),
                },
                remove(sequence),
            ])
            .unwrap();
        store.sync().unwrap();
        store.compact().unwrap();
    }
    assert!(reads.join().unwrap(), "a read missed the live message");
}

/// A message of `len` bytes that differs from one sequence number to the next.
fn large(sequence: i64, len: usize) -> Bytes {
    (0..len)
        .map(|at| (at as i64 + sequence) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Large messages (the file store writes those of 64 KiB or more from their own bytes) in one
/// batch with small ones, updates and a removal: read back whole by key, recovered, and read
/// back again after a restart, and the store goes on appending after them.
pub(crate) fn large_and_small_messages_in_one_batch_read_back_whole<B: Backend>() {
    let mut backend = B::create(false);
    let store = backend.store();
    let big = |sequence: i64, len: usize| Record::Insert {
        key: key(sequence),
        message: large(sequence, len),
        state: Bytes::from_static(b"state"),
    };
    store
        .append(&[
            big(1, 64 * 1024),
            insert(2, "small", "s2"),
            big(3, 300_000),
            big(4, 64 * 1024 - 1),
            update(1, "state 1b"),
            remove(2),
        ])
        .unwrap();
    store.append(&[big(5, 1_000_000)]).unwrap();
    store.append(&[insert(6, "after", "s6")]).unwrap();
    store.sync().unwrap();
    let keys: Vec<MessageKey> = (1..=6).map(key).collect();
    let expected = vec![
        Some(large(1, 64 * 1024)),
        None,
        Some(large(3, 300_000)),
        Some(large(4, 64 * 1024 - 1)),
        Some(large(5, 1_000_000)),
        text("after"),
    ];
    let reader = backend.store().reader().unwrap();
    assert!(reader.read(&keys).unwrap() == expected, "read back changed");
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    assert_eq!(recovered.messages.len(), 5);
    assert_eq!(
        recovered.messages[&key(1)].state,
        Bytes::from_static(b"state 1b")
    );
    assert!(recovered.messages[&key(5)].message == large(5, 1_000_000));
    let reader = backend.store().reader().unwrap();
    assert!(
        reader.read(&keys).unwrap() == expected,
        "read back changed after a restart"
    );
}

/// Declares one `#[test]` per read function, run against `$backend`.
macro_rules! read_suite {
    ($backend:ty) => {
        #[test]
        fn reads_find_live_messages_by_key_and_by_scan() {
            $crate::reads::reads_find_live_messages_by_key_and_by_scan::<$backend>()
        }
        #[test]
        fn reads_keep_finding_messages_through_compaction_and_restart() {
            $crate::reads::reads_keep_finding_messages_through_compaction_and_restart::<$backend>()
        }
        #[test]
        fn large_and_small_messages_in_one_batch_read_back_whole() {
            $crate::reads::large_and_small_messages_in_one_batch_read_back_whole::<$backend>()
        }
        #[test]
        fn a_reader_on_another_thread_reads_while_the_writer_compacts() {
            $crate::reads::a_reader_on_another_thread_reads_while_the_writer_compacts::<$backend>()
        }
    };
}
pub(crate) use read_suite;
