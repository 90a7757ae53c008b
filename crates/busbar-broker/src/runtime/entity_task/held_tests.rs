//! A send to several entity tasks sharing one `MemoryStorage` writer (as a topic fans out to
//! its subscriptions): all copies become visible together once durable (a receiver gets one), and a refusal, a failed
//! sync or a crash mid-append leaves no copy deliverable anywhere, nor after a restart.

use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use busbar_core::{EntityConfig, NewMessage, SequenceNumber};
use busbar_sessions::{SessionEntity, SessionLimits};
use busbar_store::{EntityId, GroupCommit, GroupCommitOptions, MemoryStorage, Storage};
use tokio::sync::mpsc;

use super::tests::{GUARD, execute_on, message, receiver_on, session_message};
use super::{EntityTask, OwnedEntity};
use crate::errors::BrokerError;
use crate::runtime::atomic_send::AtomicSend;
use crate::runtime::clock::Clock;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, HoldJoin};
use crate::runtime::management::{Operation, OperationResult};

/// Subscriptions of one topic: an entity task each, one writer for all.
struct Topic {
    subscriptions: Vec<mpsc::Sender<EntityCommand>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    writer: GroupCommit<MemoryStorage>,
}

fn plain() -> OwnedEntity {
    plain_with(EntityConfig::default())
}

fn plain_with(config: EntityConfig) -> OwnedEntity {
    busbar_core::Entity::new(config, 7).unwrap().into()
}

fn with_sessions() -> OwnedEntity {
    let core = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    SessionEntity::new(core, SessionLimits::default(), []).into()
}

fn start(storage: MemoryStorage, entities: Vec<OwnedEntity>) -> Topic {
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let mut subscriptions = Vec::new();
    let mut tasks = Vec::new();
    for (id, entity) in (1..).zip(entities) {
        let task = EntityTask::new(entity, EntityId(id), Clock::anchored_now(), writer.handle());
        let (inbox, receiver) = mpsc::channel(16);
        tasks.push(tokio::spawn(task.run(receiver)));
        subscriptions.push(inbox);
    }
    Topic {
        subscriptions,
        tasks,
        writer,
    }
}

impl Topic {
    /// Sends `messages` to every subscription as one operation and waits for the outcome.
    async fn send(&self, messages: Vec<NewMessage>) -> Result<OperationResult, BrokerError> {
        let (done, outcome) = std_mpsc::channel();
        let send = AtomicSend::new(
            self.subscriptions.len(),
            Box::new(move |result| {
                let _ = done.send(result);
            }),
        );
        for inbox in &self.subscriptions {
            let command = EntityCommand::Hold {
                messages: messages.clone(),
                send: HoldJoin::Atomic(send.clone()),
            };
            inbox.send(command).await.unwrap();
        }
        tokio::task::spawn_blocking(move || outcome.recv_timeout(GUARD).unwrap())
            .await
            .unwrap()
    }

    /// What a peek of every subscription shows, one count each.
    async fn peeked(&self) -> Vec<usize> {
        let mut counts = Vec::new();
        for inbox in &self.subscriptions {
            let peek = Operation::Peek {
                from: SequenceNumber(1),
                count: 10,
            };
            match execute_on(inbox, peek).await {
                Ok(OperationResult::Messages(messages)) => counts.push(messages.len()),
                other => panic!("peek failed: {other:?}"),
            }
        }
        counts
    }

    /// Stops every task and the writer; returns what the storage holds after a restart.
    async fn stop(self) -> MemoryStorage {
        drop(self.subscriptions);
        for task in self.tasks {
            task.await.unwrap();
        }
        let writer = self.writer;
        tokio::task::spawn_blocking(move || writer.shutdown().unwrap())
            .await
            .unwrap()
            .restart()
    }
}

/// Receivers with credit on every subscription, registered before the send.
async fn receivers(topic: &Topic) -> Vec<mpsc::Receiver<ConnectionCommand>> {
    let mut receivers = Vec::new();
    for inbox in &topic.subscriptions {
        receivers.push(receiver_on(inbox, 10).await);
    }
    receivers
}

/// Checks that no receiver got anything (call after a peek answered, so every task has handled
/// what came before it).
fn nothing_delivered(receivers: &mut [mpsc::Receiver<ConnectionCommand>]) {
    for deliveries in receivers {
        assert!(
            deliveries.try_recv().is_err(),
            "a copy of a failed send was delivered"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_copy_is_visible_once_all_are_durable() {
    let topic = start(MemoryStorage::new(), vec![plain(), plain(), plain()]);
    assert_eq!(
        topic.send(vec![message("a"), message("b")]).await,
        Ok(OperationResult::Done)
    );
    assert_eq!(topic.peeked().await, vec![2, 2, 2]);
    let mut storage = topic.stop().await;
    assert_eq!(storage.recover().unwrap().messages.len(), 6);
}

/// Sends to two subscriptions through a store armed to fail: the send is refused, no copy is
/// peeked or delivered in either, and nothing is left after a restart.
async fn check_store_failure_leaves_no_copy(storage: MemoryStorage, messages: Vec<NewMessage>) {
    let topic = start(storage, vec![plain(), plain()]);
    let mut receivers = receivers(&topic).await;
    let result = topic.send(messages).await;
    assert!(matches!(result, Err(BrokerError::StoreUnavailable { .. })));
    assert_eq!(topic.peeked().await, vec![0, 0]);
    nothing_delivered(&mut receivers);
    let mut storage = topic.stop().await;
    assert!(storage.recover().unwrap().messages.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sync_leaves_no_copy_in_any_subscription() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    check_store_failure_leaves_no_copy(storage, vec![message("a"), message("b")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_in_the_middle_of_the_copies_leaves_none_after_restart() {
    let mut storage = MemoryStorage::new();
    // The first subscription's copy is appended, the second's is not.
    storage.crash_after_records(1);
    check_store_failure_leaves_no_copy(storage, vec![message("a")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_refusing_its_copy_discards_the_others() {
    let detecting = EntityConfig {
        duplicate_detection_window: Some(Duration::from_secs(60)),
        ..EntityConfig::default()
    };
    let topic = start(
        MemoryStorage::new(),
        vec![plain_with(detecting), with_sessions()],
    );
    let mut receivers = receivers(&topic).await;
    // The session subscription refuses a message without a session id.
    let refused = topic.send(vec![message("a")]).await;
    assert!(matches!(refused, Err(BrokerError::NotAllowed(_))));
    assert_eq!(topic.peeked().await, vec![0, 0]);
    nothing_delivered(&mut receivers[..1]);
    // The retry (same message-id) is stored: the discarded copy left no duplicate-detection
    // trace behind.
    let retried = topic.send(vec![session_message("a", "s")]).await;
    assert_eq!(retried, Ok(OperationResult::Done));
    let delivered = tokio::time::timeout(GUARD, receivers[0].recv())
        .await
        .unwrap();
    let Some(ConnectionCommand::Deliver { delivery, .. }) = delivered else {
        panic!("expected the retried copy");
    };
    assert_eq!(delivery.session_id.as_deref(), Some("s"));
    // The plain copy was received and deleted; the session copy stays.
    let mut storage = topic.stop().await;
    assert_eq!(storage.recover().unwrap().messages.len(), 1);
}
