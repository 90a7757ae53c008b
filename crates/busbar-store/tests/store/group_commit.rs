//! The group-commit writer: every submission completes, far fewer syncs than submissions,
//! failures reach every waiting submitter, shutdown finishes what is queued.

use std::sync::mpsc;
use std::thread;

use busbar_store::{
    GroupCommit, GroupCommitOptions, Lsn, MemoryStorage, Record, Storage, StoreError,
};

use crate::records::insert;

type Outcome = Result<Lsn, StoreError>;

fn completion_to(sender: &mpsc::Sender<Outcome>) -> busbar_store::Completion {
    let sender = sender.clone();
    Box::new(move |outcome| {
        let _ = sender.send(outcome);
    })
}

/// A storage whose first sync tells the test it has started and then waits until the test
/// opens the gate, so the test decides what queues up behind it instead of racing the writer.
struct Gated<S> {
    inner: S,
    entered: mpsc::Sender<()>,
    gate: Option<mpsc::Receiver<()>>,
}

impl<S: Storage> Gated<S> {
    /// `inner` behind a gate, with the channels to learn that its first sync began and to let
    /// that sync go on.
    fn new(inner: S) -> (Self, mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (open_gate, gate) = mpsc::channel();
        let (entered, sync_entered) = mpsc::channel();
        let gated = Gated {
            inner,
            entered,
            gate: Some(gate),
        };
        (gated, sync_entered, open_gate)
    }
}

impl<S: Storage> Storage for Gated<S> {
    fn append(&mut self, records: &[Record]) -> Outcome {
        self.inner.append(records)
    }

    fn sync(&mut self) -> Outcome {
        if let Some(gate) = self.gate.take() {
            self.entered.send(()).unwrap();
            gate.recv().unwrap();
        }
        self.inner.sync()
    }

    fn recover(&mut self) -> Result<busbar_store::Recovered, StoreError> {
        self.inner.recover()
    }

    fn reader(&self) -> Result<std::sync::Arc<dyn busbar_store::MessageReader>, StoreError> {
        self.inner.reader()
    }

    fn compact(&mut self) -> Result<busbar_store::CompactionReport, StoreError> {
        self.inner.compact()
    }
}

#[test]
fn concurrent_submitters_share_one_sync() {
    const THREADS: i64 = 8;
    const PER_THREAD: i64 = 200;
    let (storage, sync_entered, open_gate) = Gated::new(MemoryStorage::new());
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let (sender, outcomes) = mpsc::channel();
    // The first submission occupies the writer in its (gated) sync...
    writer
        .handle()
        .submit(vec![insert(-1, "m", "s")], completion_to(&sender));
    sync_entered.recv().unwrap();
    // ...while every thread queues its submissions behind it.
    let submitters: Vec<_> = (0..THREADS)
        .map(|thread_index| {
            let handle = writer.handle();
            let sender = sender.clone();
            thread::spawn(move || {
                for i in 0..PER_THREAD {
                    let sequence = thread_index * PER_THREAD + i;
                    handle.submit(vec![insert(sequence, "m", "s")], completion_to(&sender));
                }
            })
        })
        .collect();
    for submitter in submitters {
        submitter.join().unwrap();
    }
    open_gate.send(()).unwrap();
    drop(sender);
    let submissions = (THREADS * PER_THREAD + 1) as usize;
    let outcomes: Vec<Outcome> = outcomes.iter().take(submissions).collect();
    // The stats count both groups, each before its submissions complete.
    let stats = writer.handle().stats();
    assert_eq!(stats.sync_micros.count, 2);
    assert_eq!(stats.group_size.count, 2);
    assert_eq!(stats.group_size.sum, submissions as u64);
    assert_eq!(stats.group_size.counts.first(), Some(&1));
    assert_eq!(stats.group_size.counts.last(), Some(&1), "{stats:?}");
    let mut storage = writer.shutdown().unwrap();
    let mut positions: Vec<Lsn> = outcomes.into_iter().map(Result::unwrap).collect();
    positions.sort();
    // Each single-record submission is told its own record's position.
    let expected: Vec<Lsn> = (1..=submissions as u64).map(Lsn).collect();
    assert_eq!(positions, expected);
    // One sync for the first submission, one for all the others.
    assert_eq!(storage.inner.sync_count(), 2);
    let recovered = storage.recover().unwrap();
    assert_eq!(recovered.messages.len(), submissions);
}

#[test]
fn free_running_submitters_all_complete() {
    const THREADS: i64 = 8;
    const PER_THREAD: i64 = 200;
    let writer = GroupCommit::spawn(MemoryStorage::new(), GroupCommitOptions::default()).unwrap();
    let (sender, outcomes) = mpsc::channel();
    let submitters: Vec<_> = (0..THREADS)
        .map(|thread_index| {
            let handle = writer.handle();
            let sender = sender.clone();
            thread::spawn(move || {
                for i in 0..PER_THREAD {
                    let sequence = thread_index * PER_THREAD + i;
                    handle.submit(vec![insert(sequence, "m", "s")], completion_to(&sender));
                }
            })
        })
        .collect();
    drop(sender);
    for submitter in submitters {
        submitter.join().unwrap();
    }
    let mut storage = writer.shutdown().unwrap();
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect();
    assert_eq!(outcomes.len(), (THREADS * PER_THREAD) as usize);
    assert!(outcomes.iter().all(Result::is_ok));
    assert!(storage.sync_count() <= (THREADS * PER_THREAD) as u64);
    let recovered = storage.recover().unwrap();
    assert_eq!(recovered.messages.len(), (THREADS * PER_THREAD) as usize);
}

#[test]
fn failed_sync_fails_every_waiting_and_later_submission() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    for sequence in 0..50 {
        handle.submit(vec![insert(sequence, "m", "s")], completion_to(&sender));
    }
    drop(sender);
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect();
    assert_eq!(outcomes.len(), 50);
    assert!(outcomes.iter().all(Result::is_err), "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Err(StoreError::InjectedFault(_))))
    );
    let (sender, later) = mpsc::channel();
    handle.submit(vec![insert(99, "m", "s")], completion_to(&sender));
    assert!(matches!(
        later.recv().unwrap(),
        Err(StoreError::Poisoned { .. })
    ));
    let storage = writer.shutdown().unwrap();
    let mut restarted = storage.restart();
    assert!(restarted.recover().unwrap().messages.is_empty());
}

#[test]
fn shutdown_commits_queued_work_then_refuses() {
    let writer = GroupCommit::spawn(
        MemoryStorage::new(),
        GroupCommitOptions {
            queue_capacity: 4,
            compaction: false,
        },
    )
    .unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    for sequence in 0..20 {
        handle.submit(vec![insert(sequence, "m", "s")], completion_to(&sender));
    }
    let mut storage = writer.shutdown().unwrap();
    assert_eq!(storage.recover().unwrap().messages.len(), 20);
    handle.submit(vec![insert(50, "m", "s")], completion_to(&sender));
    let rejected = handle
        .try_submit(vec![insert(51, "m", "s")], completion_to(&sender))
        .unwrap_err();
    assert!(rejected.closed);
    assert_eq!(rejected.records, vec![insert(51, "m", "s")]);
    // The handed-back completion holds a sender too.
    drop(rejected);
    drop(sender);
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect();
    assert_eq!(outcomes.len(), 21);
    assert!(outcomes[..20].iter().all(Result::is_ok));
    assert!(matches!(outcomes[20], Err(StoreError::Closed)));
}

#[test]
fn dropping_the_writer_still_commits_queued_work() {
    let writer = GroupCommit::spawn(MemoryStorage::new(), GroupCommitOptions::default()).unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    for sequence in 0..10 {
        handle.submit(vec![insert(sequence, "m", "s")], completion_to(&sender));
    }
    drop(writer);
    drop(sender);
    let outcomes: Vec<Outcome> = outcomes.into_iter().collect();
    assert_eq!(outcomes.len(), 10);
    assert!(outcomes.iter().all(Result::is_ok));
}

#[test]
fn oversized_record_fails_only_its_submission() {
    let dir = crate::support::TestDir::new("group-size");
    let storage =
        busbar_store::FileStorage::open(dir.path(), busbar_store::FileOptions::default()).unwrap();
    let (storage, sync_entered, open_gate) = Gated::new(storage);
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    handle.submit(vec![insert(1, "m", "s")], completion_to(&sender));
    sync_entered.recv().unwrap();
    // One group behind the gated sync: the oversized submission between two others.
    let huge = Record::Update {
        key: crate::records::key(1),
        state: bytes::Bytes::from(vec![0u8; (1 << 30) + 1]),
    };
    handle.submit(vec![insert(2, "m", "s")], completion_to(&sender));
    handle.submit(vec![huge], completion_to(&sender));
    handle.submit(
        vec![insert(3, "m", "s"), insert(4, "m", "s")],
        completion_to(&sender),
    );
    open_gate.send(()).unwrap();
    let outcomes: Vec<Outcome> = outcomes.iter().take(4).collect();
    let position = |outcome: &Outcome| outcome.as_ref().ok().copied();
    assert_eq!(position(&outcomes[0]), Some(Lsn(1)));
    assert_eq!(position(&outcomes[1]), Some(Lsn(2)));
    assert!(
        matches!(outcomes[2], Err(StoreError::RecordTooLarge { .. })),
        "{:?}",
        outcomes[2]
    );
    // Told the position of its last record.
    assert_eq!(position(&outcomes[3]), Some(Lsn(4)));
    let mut storage = writer.shutdown().unwrap();
    assert_eq!(storage.recover().unwrap().messages.len(), 4);
}

#[test]
fn writer_compacts_so_disk_use_stays_bounded() {
    let dir = crate::support::TestDir::new("group-compaction");
    let options = busbar_store::FileOptions {
        segment_size: 4096,
        compact_dead_percent: 50,
    };
    let storage = busbar_store::FileStorage::open(dir.path(), options).unwrap();
    let writer = GroupCommit::spawn(
        storage,
        GroupCommitOptions {
            queue_capacity: 8,
            compaction: true,
        },
    )
    .unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    let body = "b".repeat(200);
    for sequence in 1..=2000 {
        // Each message is settled by the next submission: the live backlog stays at one.
        let records = vec![
            insert(sequence, &body, "s"),
            crate::records::remove(sequence - 1),
        ];
        handle.submit(records, completion_to(&sender));
    }
    drop(sender);
    assert!(outcomes.iter().all(|outcome| outcome.is_ok()));
    let mut storage = writer.shutdown().unwrap();
    // About 440 KiB were written in 4 KiB segments; only a few may remain.
    assert!(
        storage.segment_count() <= 4,
        "{} segments, {} bytes",
        storage.segment_count(),
        storage.disk_usage()
    );
    let recovered = storage.recover().unwrap();
    assert_eq!(
        recovered.messages.keys().collect::<Vec<_>>(),
        [crate::records::key(2000)]
    );
}

/// A volatile storage gets no writer thread: each submission completes before `submit` or
/// `try_submit` returns, on the submitter's thread, at consecutive positions.
#[test]
fn volatile_storage_commits_on_the_submitters_thread() {
    let writer =
        GroupCommit::spawn(MemoryStorage::volatile(), GroupCommitOptions::default()).unwrap();
    let handle = writer.handle();
    let submitter = thread::current().id();
    let (sender, outcomes) = mpsc::channel();
    for sequence in 0..3 {
        let sender = sender.clone();
        let completion: busbar_store::Completion = Box::new(move |outcome| {
            let _ = sender.send((thread::current().id(), outcome));
        });
        if sequence == 1 {
            handle
                .try_submit(vec![insert(sequence, "m", "s")], completion)
                .unwrap();
        } else {
            handle.submit(vec![insert(sequence, "m", "s")], completion);
        }
        let (completed_on, outcome) = outcomes.try_recv().expect("completed before returning");
        assert_eq!(completed_on, submitter);
        assert_eq!(outcome.unwrap(), Lsn(sequence as u64 + 1));
    }
    let mut storage = writer.shutdown().unwrap();
    assert!(storage.is_volatile());
    assert_eq!(storage.sync().unwrap(), Lsn(3));
    let (sender, closed) = mpsc::channel();
    handle.submit(vec![insert(9, "m", "s")], completion_to(&sender));
    assert!(matches!(
        closed.try_recv().unwrap(),
        Err(StoreError::Closed)
    ));
}

/// Failures reach the submitter as with a writer thread, and a submission after shutdown (or
/// after the owner dropped the store) completes with `Closed`.
#[test]
fn volatile_storage_reports_failures_and_closing() {
    let mut storage = MemoryStorage::volatile();
    storage.fail_next_sync();
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let handle = writer.handle();
    let (sender, outcomes) = mpsc::channel();
    handle.submit(vec![insert(1, "m", "s")], completion_to(&sender));
    assert!(matches!(
        outcomes.try_recv().unwrap(),
        Err(StoreError::InjectedFault(_))
    ));
    handle.submit(vec![insert(2, "m", "s")], completion_to(&sender));
    assert!(matches!(
        outcomes.try_recv().unwrap(),
        Err(StoreError::Poisoned { .. })
    ));
    drop(writer);
    handle.submit(vec![insert(3, "m", "s")], completion_to(&sender));
    assert!(matches!(
        outcomes.try_recv().unwrap(),
        Err(StoreError::Closed)
    ));
}
