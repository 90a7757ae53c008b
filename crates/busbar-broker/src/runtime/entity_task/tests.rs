//! The entity task against `MemoryStorage`: replies wait for durability, store failures are
//! reported as a retriable condition, refusals map to the Service Bus errors.

use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use busbar_amqp::message::MessageBuilder;
use busbar_core::{EntityConfig, NewMessage, Outcome, SequenceNumber, SubQueue};
use busbar_sessions::{SessionEntity, SessionLimits};
use busbar_store::{EntityId, GroupCommit, GroupCommitOptions, MemoryStorage, Storage};
use bytes::Bytes;
use tokio::sync::mpsc;

use super::{EntityTask, OwnedEntity};
use crate::errors::BrokerError;
use crate::runtime::clock::Clock;
use crate::runtime::mailbox::EntityCommand;
use crate::runtime::management::{Operation, OperationResult};

/// Failure guard for replies that must come; never reached when the code is right.
const GUARD: Duration = Duration::from_secs(10);

struct Harness {
    inbox: mpsc::Sender<EntityCommand>,
    writer: GroupCommit<MemoryStorage>,
    task: tokio::task::JoinHandle<()>,
}

fn start(storage: MemoryStorage) -> Harness {
    start_with(
        storage,
        busbar_core::Entity::new(EntityConfig::default(), 7).unwrap(),
    )
}

fn start_with(storage: MemoryStorage, entity: impl Into<OwnedEntity>) -> Harness {
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let task = EntityTask::new(entity, EntityId(1), Clock::anchored_now(), writer.handle());
    let (inbox, receiver) = mpsc::channel(16);
    let task = tokio::spawn(task.run(receiver));
    Harness {
        inbox,
        writer,
        task,
    }
}

impl Harness {
    /// Runs an operation and waits for its reply.
    async fn execute(&self, operation: Operation) -> Result<OperationResult, BrokerError> {
        let (done, outcome) = std_mpsc::channel();
        self.inbox
            .send(EntityCommand::Execute {
                sub_queue: SubQueue::Main,
                operation,
                reply: Box::new(move |result| {
                    let _ = done.send(result);
                }),
            })
            .await
            .unwrap();
        tokio::task::spawn_blocking(move || outcome.recv_timeout(GUARD).unwrap())
            .await
            .unwrap()
    }

    /// Stops the task and the writer; returns what the storage holds after a restart.
    async fn stop(self) -> MemoryStorage {
        drop(self.inbox);
        self.task.await.unwrap();
        let writer = self.writer;
        tokio::task::spawn_blocking(move || writer.shutdown().unwrap())
            .await
            .unwrap()
            .restart()
    }
}

fn message(id: &str) -> NewMessage {
    NewMessage {
        payload: MessageBuilder::new()
            .data(Bytes::from(id.to_owned()))
            .build()
            .into_bytes(),
        message_id: Some(Bytes::from(id.to_owned())),
        ..NewMessage::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_send_is_durable() {
    let harness = start(MemoryStorage::new());
    let result = harness
        .execute(Operation::Enqueue(vec![message("a"), message("b")]))
        .await;
    assert!(matches!(result, Ok(OperationResult::SequenceNumbers(ref s)) if s.len() == 2));
    let mut storage = harness.stop().await;
    assert_eq!(storage.recover().unwrap().messages.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_sync_is_reported_as_store_unavailable() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    let harness = start(storage);
    let result = harness
        .execute(Operation::Enqueue(vec![message("a")]))
        .await;
    let Err(error) = result else {
        panic!("a send whose sync failed was acknowledged");
    };
    assert!(matches!(error, BrokerError::StoreUnavailable { .. }));
    // server-busy is the condition every SDK retries.
    let wire = error.to_wire(&crate::errors::ErrorScope {
        namespace: "ns",
        entity: "q",
        tracking_id: crate::errors::TrackingId::random(),
        now_unix_millis: 0,
    });
    assert_eq!(wire.condition, "com.microsoft:server-busy");
    let mut storage = harness.stop().await;
    assert!(storage.recover().unwrap().messages.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_map_to_the_service_bus_errors_and_change_nothing() {
    let harness = start(MemoryStorage::new());
    harness
        .execute(Operation::Enqueue(vec![message("a")]))
        .await
        .unwrap();
    let unknown = busbar_core::LockToken::from_bytes([9; 16]);
    assert_eq!(
        harness.execute(Operation::RenewLock(vec![unknown])).await,
        Err(BrokerError::MessageLockLost)
    );
    assert_eq!(
        harness
            .execute(Operation::Settle {
                tokens: vec![unknown],
                outcome: Outcome::Complete,
            })
            .await,
        Err(BrokerError::MessageLockLost)
    );
    assert_eq!(
        harness
            .execute(Operation::CancelScheduled(vec![SequenceNumber(1)]))
            .await,
        Err(BrokerError::MessageNotFound { sequence_number: 1 })
    );
    let peeked = harness
        .execute(Operation::Peek {
            from: SequenceNumber(1),
            count: 10,
        })
        .await;
    assert!(matches!(peeked, Ok(OperationResult::Messages(ref m)) if m.len() == 1));
    let mut storage = harness.stop().await;
    assert_eq!(storage.recover().unwrap().messages.len(), 1);
}

fn session_message(id: &str, session: &str) -> NewMessage {
    NewMessage {
        session_id: Some(session.to_owned()),
        ..message(id)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_entity_refuses_a_batch_with_a_message_without_session_id() {
    let core = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    let entity = SessionEntity::new(core, SessionLimits::default(), []);
    let harness = start_with(MemoryStorage::new(), entity);
    let refused = harness
        .execute(Operation::Enqueue(vec![
            session_message("a", "s1"),
            message("b"),
        ]))
        .await;
    let Err(BrokerError::NotAllowed(reason)) = refused else {
        panic!("a message without session id was accepted: {refused:?}");
    };
    assert!(reason.contains("SessionId"), "{reason}");
    let stored = harness
        .execute(Operation::Enqueue(vec![
            session_message("c", "s1"),
            session_message("d", "s2"),
        ]))
        .await;
    assert!(matches!(stored, Ok(OperationResult::SequenceNumbers(ref s)) if s.len() == 2));
    let mut storage = harness.stop().await;
    let recovered = storage.recover().unwrap();
    assert_eq!(recovered.messages.len(), 2);
}
