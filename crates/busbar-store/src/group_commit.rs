//! `GroupCommit`: the writer thread that appends everything queued, syncs once, and then
//! reports each submission durable (or failed); a volatile storage is committed inline instead.

mod health;
mod inline;
mod stats;

use std::collections::VecDeque;
use std::time::Duration;

use crate::error::StoreError;
use crate::record::{Lsn, Record};
use crate::storage::Storage;
use crate::sync::thread::{self, JoinHandle};
use crate::sync::{Arc, Condvar, Mutex, MutexGuard};
use health::Health;
pub use health::StoreCondition;
use inline::{CommitNow, InlineStore};
use stats::CommitStats;
pub use stats::{CommitStatsSnapshot, GROUP_SIZE_BOUNDS, HistogramCounts, SYNC_MICROS_BOUNDS};

/// While the disk is full, how often the idle writer looks whether space was freed.
const ROOM_RECHECK: Duration = Duration::from_millis(250);

/// Called exactly once with the outcome of a submission: `Ok(lsn)` once its records are durable
/// (`lsn` is the position of its last record), or the error that prevented it.
pub type Completion = Box<dyn FnOnce(Result<Lsn, StoreError>) + Send>;

/// Tuning for [`GroupCommit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitOptions {
    /// Submissions that may wait for the writer; past this, [`GroupCommitHandle::submit`]
    /// blocks and [`GroupCommitHandle::try_submit`] refuses.
    pub queue_capacity: usize,
    /// Whether the writer runs compaction steps while it has nothing else to do.
    pub compaction: bool,
}

impl Default for GroupCommitOptions {
    fn default() -> Self {
        GroupCommitOptions {
            queue_capacity: 4096,
            compaction: true,
        }
    }
}

/// A submission refused by [`GroupCommitHandle::try_submit`]; the records and completion are
/// handed back untouched.
pub struct Rejected {
    /// The records that were not queued.
    pub records: Vec<Record>,
    /// The completion that was not called.
    pub completion: Completion,
    /// Why: `true` if the writer has shut down, `false` if the queue was full.
    pub closed: bool,
}

impl std::fmt::Debug for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rejected")
            .field("records", &self.records.len())
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

/// The submissions waiting for a [`GroupCommit`] writer (see [`GroupCommitHandle::backlog`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    /// Submissions queued and not yet taken by the writer.
    pub queued: usize,
    /// Past this many, `submit` blocks and `try_submit` refuses.
    pub capacity: usize,
}

struct Submission {
    records: Vec<Record>,
    completion: Completion,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Submission>,
    closed: bool,
    /// The writer is waiting on `work`. Notifying a condition variable is a system call even
    /// when nobody waits, so submitters notify only then (at most once per wait).
    writer_waiting: bool,
    /// Submitters waiting on `room`; the writer notifies only when there are some.
    submitters_waiting: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when work arrives or the writer is closed.
    work: Condvar,
    /// Signalled when the writer takes work, freeing room.
    room: Condvar,
    capacity: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A panicking completion cannot leave the queue half-updated, so a poisoned lock is
        // still usable.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Runs a [`Storage`] on its own thread and commits submissions in groups: one sync for
/// everything that queued up while the previous sync ran, so throughput grows with the number
/// of concurrent submitters instead of being one sync per submission.
///
/// Once the storage fails, every waiting and later submission completes with the error (the
/// storage reports [`StoreError::Poisoned`]): nothing is retried, nothing acknowledged.
///
/// A storage that keeps nothing ([`Storage::is_volatile`]) gets no thread: each submission is
/// appended, synced and completed on the submitter's thread, one at a time.
pub struct GroupCommit<S> {
    mode: Mode<S>,
    stats: std::sync::Arc<CommitStats>,
    health: std::sync::Arc<Health>,
}

enum Mode<S> {
    Thread {
        shared: Arc<Shared>,
        /// Taken by `shutdown` (or `drop`), which join it.
        thread: Option<JoinHandle<S>>,
    },
    /// Behind `std`'s `Arc`, not the loom facade's: loom's cannot hold the handles' `dyn`
    /// value, and an inline store hands nothing between threads for loom to explore.
    Inline(std::sync::Arc<InlineStore<S>>),
}

/// Submits records to a [`GroupCommit`] writer; cheap to clone and share between threads.
#[derive(Clone)]
pub struct GroupCommitHandle {
    target: Target,
    stats: std::sync::Arc<CommitStats>,
    health: std::sync::Arc<Health>,
}

#[derive(Clone)]
enum Target {
    Writer(Arc<Shared>),
    Inline(std::sync::Arc<dyn CommitNow>),
}

impl<S: Storage + 'static> GroupCommit<S> {
    /// Starts the writer thread, which owns `storage` until [`shutdown`](GroupCommit::shutdown)
    /// (no thread for a volatile storage: see [`GroupCommit`]).
    pub fn spawn(storage: S, options: GroupCommitOptions) -> Result<GroupCommit<S>, StoreError> {
        let stats = std::sync::Arc::<CommitStats>::default();
        let health = std::sync::Arc::<Health>::default();
        if storage.is_volatile() {
            return Ok(GroupCommit {
                mode: Mode::Inline(std::sync::Arc::new(InlineStore::new(
                    storage,
                    std::sync::Arc::clone(&stats),
                    std::sync::Arc::clone(&health),
                ))),
                stats,
                health,
            });
        }
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            room: Condvar::new(),
            capacity: options.queue_capacity.max(1),
        });
        let writer_shared = Arc::clone(&shared);
        let writer = Writer {
            stats: std::sync::Arc::clone(&stats),
            health: std::sync::Arc::clone(&health),
            compaction: options.compaction,
        };
        let thread = thread::Builder::new()
            .name("busbar-store-writer".into())
            .spawn(move || writer.run(storage, &writer_shared))
            .map_err(|e| StoreError::io("spawn writer thread", "", e))?;
        Ok(GroupCommit {
            mode: Mode::Thread {
                shared,
                thread: Some(thread),
            },
            stats,
            health,
        })
    }

    /// A handle to submit records with.
    pub fn handle(&self) -> GroupCommitHandle {
        let target = match &self.mode {
            Mode::Thread { shared, .. } => Target::Writer(Arc::clone(shared)),
            Mode::Inline(store) => Target::Inline(store.clone()),
        };
        GroupCommitHandle {
            target,
            stats: std::sync::Arc::clone(&self.stats),
            health: std::sync::Arc::clone(&self.health),
        }
    }

    /// Stops taking submissions, lets the writer commit everything already queued (calling
    /// every completion), and returns the storage. Later submissions complete with
    /// [`StoreError::Closed`].
    pub fn shutdown(mut self) -> std::thread::Result<S> {
        let stopped = match &mut self.mode {
            Mode::Thread { shared, thread } => {
                close(shared);
                thread.take().map(JoinHandle::join)
            }
            Mode::Inline(store) => store.close().map(Ok),
        };
        stopped.unwrap_or_else(|| Err(Box::new("the storage was already taken back")))
    }
}

fn close(shared: &Shared) {
    shared.lock().closed = true;
    shared.work.notify_all();
    shared.room.notify_all();
}

/// Dropping the writer without [`shutdown`](GroupCommit::shutdown) also commits what is queued
/// (every completion is still called) and waits for the thread; the storage is then dropped.
impl<S> Drop for GroupCommit<S> {
    fn drop(&mut self) {
        match &mut self.mode {
            Mode::Thread { shared, thread } => {
                close(shared);
                if let Some(thread) = thread.take() {
                    // A panic on the writer thread already reached its completions' owners as
                    // dropped completions; there is nothing left to report from a destructor.
                    let _ = thread.join();
                }
            }
            Mode::Inline(store) => drop(store.close()),
        }
    }
}

impl GroupCommitHandle {
    /// The sync latencies and group sizes of the commits so far (read without a lock).
    pub fn stats(&self) -> CommitStatsSnapshot {
        self.stats.snapshot()
    }

    /// The storage's condition: full (new messages refused until space is freed) or failed
    /// (nothing more acknowledged until a restart), with why.
    pub fn condition(&self) -> StoreCondition {
        self.health.condition()
    }

    /// Whether new messages must be refused (the storage is full or failed); one atomic load,
    /// for every send. [`condition`](Self::condition) says why.
    pub fn refuses_new_messages(&self) -> bool {
        self.health.refuses_new_messages()
    }

    /// How many submissions wait for the writer, and how many may: a submitter looks at it to
    /// shed load before the queue fills and [`submit`](Self::submit) blocks. (An inline store
    /// never queues: nothing waits, and its capacity is unbounded.)
    pub fn backlog(&self) -> Backlog {
        match &self.target {
            Target::Writer(shared) => Backlog {
                queued: shared.lock().pending.len(),
                capacity: shared.capacity,
            },
            Target::Inline(_) => Backlog {
                queued: 0,
                capacity: usize::MAX,
            },
        }
    }

    /// Queues `records`; `completion` is called once they are durable or have failed.
    ///
    /// **Blocks** while the queue is full (back-pressure). After shutdown, `completion` is
    /// called at once with [`StoreError::Closed`]. Use [`try_submit`](Self::try_submit) where
    /// blocking is not allowed.
    pub fn submit(&self, records: Vec<Record>, completion: Completion) {
        let shared = match &self.target {
            Target::Writer(shared) => shared,
            Target::Inline(store) => return store.commit(records, completion),
        };
        let mut queue = shared.lock();
        while !queue.closed && queue.pending.len() >= shared.capacity {
            queue.submitters_waiting += 1;
            queue = shared
                .room
                .wait(queue)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            queue.submitters_waiting -= 1;
        }
        if queue.closed {
            drop(queue);
            completion(Err(StoreError::Closed));
            return;
        }
        enqueue(shared, queue, records, completion);
    }

    /// Queues `records` if there is room; otherwise hands them back with the completion
    /// (uncalled) so the caller can apply its own back-pressure. (An inline store commits at
    /// once and never refuses.)
    pub fn try_submit(&self, records: Vec<Record>, completion: Completion) -> Result<(), Rejected> {
        let shared = match &self.target {
            Target::Writer(shared) => shared,
            Target::Inline(store) => {
                store.commit(records, completion);
                return Ok(());
            }
        };
        let queue = shared.lock();
        if queue.closed || queue.pending.len() >= shared.capacity {
            return Err(Rejected {
                records,
                completion,
                closed: queue.closed,
            });
        }
        enqueue(shared, queue, records, completion);
        Ok(())
    }
}

/// Queues a submission (the caller checked for room) and wakes the writer if it waits.
fn enqueue(
    shared: &Shared,
    mut queue: MutexGuard<'_, Queue>,
    records: Vec<Record>,
    completion: Completion,
) {
    queue.pending.push_back(Submission {
        records,
        completion,
    });
    let wake_writer = std::mem::take(&mut queue.writer_waiting);
    drop(queue);
    if wake_writer {
        shared.work.notify_one();
    }
}

/// How long [`take_batch`] may wait for work.
#[derive(Clone, Copy)]
enum Wait {
    /// Take only what is already there (compaction has work).
    No,
    /// At most this long (the disk is full: its room is looked at again).
    UpTo(Duration),
    /// Until work arrives or the writer is closed.
    Forever,
}

/// Waits for work as `wait` allows; `None` once closed with nothing left.
fn take_batch(shared: &Shared, wait: Wait) -> Option<Vec<Submission>> {
    let mut queue = shared.lock();
    while queue.pending.is_empty() && !queue.closed {
        queue.writer_waiting = true;
        match wait {
            Wait::No => break,
            Wait::UpTo(timeout) => {
                let (waited, result) = shared
                    .work
                    .wait_timeout(queue, timeout)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                queue = waited;
                if result.timed_out() {
                    break;
                }
            }
            Wait::Forever => {
                queue = shared
                    .work
                    .wait(queue)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        }
    }
    queue.writer_waiting = false;
    if queue.pending.is_empty() && queue.closed {
        return None;
    }
    let batch: Vec<Submission> = queue.pending.drain(..).collect();
    let wake_submitters = queue.submitters_waiting > 0;
    drop(queue);
    if wake_submitters {
        shared.room.notify_all();
    }
    Some(batch)
}

/// The writer thread's share of the [`GroupCommit`].
struct Writer {
    stats: std::sync::Arc<CommitStats>,
    health: std::sync::Arc<Health>,
    compaction: bool,
}

impl Writer {
    fn run<S: Storage>(self, mut storage: S, shared: &Shared) -> S {
        let mut compaction_due = self.compaction;
        loop {
            let wait = if compaction_due {
                Wait::No
            } else if self.health.is_full() {
                Wait::UpTo(ROOM_RECHECK)
            } else {
                Wait::Forever
            };
            let Some(batch) = take_batch(shared, wait) else {
                break;
            };
            if !batch.is_empty() {
                commit(&mut storage, batch, &self.stats, &self.health);
            }
            // One bounded step after every commit (under sustained load the queue is never
            // empty, and waiting for idle time would let disk use grow for as long as the load
            // lasts), and more steps while idle as long as there is work. A step with nothing
            // to do does no IO. A failed step is not retried until after the next commit; if it
            // poisoned the storage, that commit reports it.
            if self.compaction {
                compaction_due = storage.compact().is_ok_and(|report| report.more);
            }
            // After compaction, which may have freed some.
            self.health.record_room(storage.check_room());
            // Only while nothing waits, so preallocating never delays a group; under sustained
            // load appends simply extend the file. A failure only means the next syncs cost
            // more.
            if shared.lock().pending.is_empty() {
                let _ = storage.preallocate();
            }
        }
        storage
    }
}

/// Appends every submission, syncs once, then completes them all.
fn commit<S: Storage>(
    storage: &mut S,
    batch: Vec<Submission>,
    stats: &CommitStats,
    health: &Health,
) {
    // The records move into one group (no per-record clone); `counts` remembers whose is whose.
    let mut counts = Vec::with_capacity(batch.len());
    let mut completions = Vec::with_capacity(batch.len());
    let mut records = Vec::with_capacity(batch.iter().map(|s| s.records.len()).sum());
    for submission in batch {
        counts.push(submission.records.len());
        records.extend(submission.records);
        completions.push(submission.completion);
    }
    let outcomes = append_all(storage, &records, &counts).and_then(|outcomes| {
        let started = std::time::Instant::now();
        storage.sync()?;
        stats.synced(counts.len(), started.elapsed());
        Ok(outcomes)
    });
    // The records are freed after the completions run: the submitters need not wait for that.
    match outcomes {
        Ok(outcomes) => {
            for (completion, outcome) in completions.into_iter().zip(outcomes) {
                completion(outcome);
            }
        }
        Err(error) => {
            health.record_failure(&error);
            for completion in completions {
                completion(Err(error.clone()));
            }
        }
    }
}

/// Appends the whole group as one batch (one write for the group), and works out each
/// submission's position from the consecutive positions records get. `counts` are the
/// submissions' record counts, in order. `Err` is a failure that poisoned the storage;
/// per-submission errors are inside.
fn append_all<S: Storage>(
    storage: &mut S,
    records: &[Record],
    counts: &[usize],
) -> Result<Vec<Result<Lsn, StoreError>>, StoreError> {
    match storage.append(records) {
        Ok(last) => {
            let mut records_after = records.len() as u64;
            Ok(counts
                .iter()
                .map(|&count| {
                    records_after -= count as u64;
                    Ok(Lsn(last.0.saturating_sub(records_after)))
                })
                .collect())
        }
        // Nothing was written; one append per submission fails only the offending one (or,
        // with the disk full, those the room left cannot take).
        Err(StoreError::RecordTooLarge { .. } | StoreError::Full { .. }) => {
            append_each(storage, records, counts)
        }
        Err(error) => Err(error),
    }
}

fn append_each<S: Storage>(
    storage: &mut S,
    records: &[Record],
    counts: &[usize],
) -> Result<Vec<Result<Lsn, StoreError>>, StoreError> {
    let mut outcomes = Vec::with_capacity(counts.len());
    let mut rest = records;
    for &count in counts {
        let (own, after) = rest.split_at(count);
        rest = after;
        match storage.append(own) {
            Ok(lsn) => outcomes.push(Ok(lsn)),
            Err(error @ (StoreError::RecordTooLarge { .. } | StoreError::Full { .. })) => {
                outcomes.push(Err(error));
            }
            Err(error) => return Err(error),
        }
    }
    Ok(outcomes)
}

#[cfg(all(loom, test))]
mod loom_tests {
    use super::*;
    use crate::memory::MemoryStorage;
    use crate::record::{EntityId, MessageKey};
    use bytes::Bytes;

    fn insert(sequence: i64) -> Vec<Record> {
        vec![Record::Insert {
            key: MessageKey {
                entity: EntityId(1),
                sequence,
            },
            message: Bytes::new(),
            state: Bytes::new(),
        }]
    }

    type Outcomes = Arc<Mutex<Vec<(i64, Result<Lsn, StoreError>)>>>;

    fn recording(outcomes: &Outcomes, sequence: i64) -> Completion {
        let outcomes = Arc::clone(outcomes);
        Box::new(move |outcome| outcomes.lock().unwrap().push((sequence, outcome)))
    }

    /// Explores interleavings with up to three preemptions: enough for the hand-offs here, and
    /// keeps the writer's wait loops from blowing up the state space.
    fn model(test: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(test);
    }

    const NO_COMPACTION: GroupCommitOptions = GroupCommitOptions {
        queue_capacity: 1,
        compaction: false,
    };

    #[test]
    fn loom_concurrent_submitters_each_complete_once() {
        model(|| {
            let writer = GroupCommit::spawn(MemoryStorage::new(), NO_COMPACTION).unwrap();
            let outcomes: Outcomes = Arc::default();
            let submitters: Vec<_> = (0..2)
                .map(|sequence| {
                    let handle = writer.handle();
                    let outcomes = Arc::clone(&outcomes);
                    thread::spawn(move || {
                        handle.submit(insert(sequence), recording(&outcomes, sequence))
                    })
                })
                .collect();
            for submitter in submitters {
                submitter.join().unwrap();
            }
            let mut storage = writer.shutdown().unwrap();
            let outcomes = outcomes.lock().unwrap();
            assert_eq!(outcomes.len(), 2);
            assert!(outcomes.iter().all(|(_, outcome)| outcome.is_ok()));
            assert_eq!(storage.recover().unwrap().messages.len(), 2);
        });
    }

    /// `try_submit` wakes a waiting writer too (it notifies only when the writer waits), and a
    /// submitter blocked on a full queue is woken once the writer takes the batch.
    #[test]
    fn loom_try_submit_and_blocked_submit_are_both_stored() {
        model(|| {
            let writer = GroupCommit::spawn(MemoryStorage::new(), NO_COMPACTION).unwrap();
            let outcomes: Outcomes = Arc::default();
            let handle = writer.handle();
            let blocked_outcomes = Arc::clone(&outcomes);
            let blocked =
                thread::spawn(move || handle.submit(insert(1), recording(&blocked_outcomes, 1)));
            // Refused only while the queue is full; then it is retried like a caller would.
            let mut records = insert(2);
            let mut completion = recording(&outcomes, 2);
            while let Err(rejected) = writer.handle().try_submit(records, completion) {
                assert!(!rejected.closed);
                records = rejected.records;
                completion = rejected.completion;
                thread::yield_now();
            }
            blocked.join().unwrap();
            let mut storage = writer.shutdown().unwrap();
            assert_eq!(outcomes.lock().unwrap().len(), 2);
            assert_eq!(storage.recover().unwrap().messages.len(), 2);
        });
    }

    #[test]
    fn loom_submit_racing_shutdown_completes_exactly_once() {
        model(|| {
            let writer = GroupCommit::spawn(MemoryStorage::new(), NO_COMPACTION).unwrap();
            let outcomes: Outcomes = Arc::default();
            let handle = writer.handle();
            let submitter_outcomes = Arc::clone(&outcomes);
            let submitter =
                thread::spawn(move || handle.submit(insert(7), recording(&submitter_outcomes, 7)));
            let mut storage = writer.shutdown().unwrap();
            submitter.join().unwrap();
            let outcomes = outcomes.lock().unwrap();
            assert_eq!(outcomes.len(), 1);
            let stored = storage.recover().unwrap().messages.len();
            match &outcomes[0].1 {
                // Acknowledged means stored; refused means not.
                Ok(_) => assert_eq!(stored, 1),
                Err(StoreError::Closed) => assert_eq!(stored, 0),
                Err(other) => panic!("unexpected outcome {other:?}"),
            }
        });
    }
}
