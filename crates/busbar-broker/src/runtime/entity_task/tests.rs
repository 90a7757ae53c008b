//! The entity task against `MemoryStorage`: replies wait for durability, store failures are
//! reported as a retriable condition, refusals map to the Service Bus errors, a receiver never
//! gets a message whose insert is not durable.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use busbar_amqp::engine::{Connection, ConnectionConfig, Event, LinkId, Millis};
use busbar_amqp::frame::{ProtocolHeader, encode_amqp_frame};
use busbar_amqp::message::MessageBuilder;
use busbar_amqp::performatives::{
    Attach, Begin, Handle, Open, Performative, ReceiverSettleMode, Role, SenderSettleMode, Source,
    Target, TransferNumber,
};
use busbar_core::{EntityConfig, NewMessage, Outcome, ReceiveMode, SequenceNumber, SubQueue};
use busbar_sessions::{SessionEntity, SessionLimits};
use busbar_store::{EntityId, GroupCommit, GroupCommitOptions, MemoryStorage, Storage};
use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;

use super::{EntityTask, OwnedEntity};
use crate::errors::BrokerError;
use crate::runtime::clock::Clock;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, Mailbox, ReceiverKey};
use crate::runtime::management::{Operation, OperationResult, SessionOperation, SessionResult};
use crate::runtime::metrics::EntityMetrics;

/// Failure guard for replies that must come; never reached when the code is right.
pub(super) const GUARD: Duration = Duration::from_secs(10);

pub(super) struct Harness {
    pub(super) inbox: mpsc::Sender<EntityCommand>,
    writer: GroupCommit<MemoryStorage>,
    task: tokio::task::JoinHandle<()>,
    metrics: Arc<EntityMetrics>,
}

fn start(storage: MemoryStorage) -> Harness {
    start_with(
        storage,
        busbar_core::Entity::new(EntityConfig::default(), 7).unwrap(),
    )
}

pub(super) fn start_with(storage: MemoryStorage, entity: impl Into<OwnedEntity>) -> Harness {
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let metrics = Arc::<EntityMetrics>::default();
    let task = EntityTask::new(entity, EntityId(1), Clock::anchored_now(), writer.handle())
        .with_metrics(Arc::clone(&metrics));
    let (inbox, receiver) = mpsc::channel(16);
    let task = tokio::spawn(task.run(receiver));
    Harness {
        inbox,
        writer,
        task,
        metrics,
    }
}

impl Harness {
    /// Runs an operation and waits for its reply.
    async fn execute(&self, operation: Operation) -> Result<OperationResult, BrokerError> {
        execute_on(&self.inbox, operation).await
    }

    /// Stops the task and the writer; returns what the storage holds after a restart.
    pub(super) async fn stop(self) -> MemoryStorage {
        drop(self.inbox);
        self.task.await.unwrap();
        let writer = self.writer;
        tokio::task::spawn_blocking(move || writer.shutdown().unwrap())
            .await
            .unwrap()
            .restart()
    }
}

/// Waits (off the runtime's threads) for the answer a reply closure sends to `answers`.
pub(super) async fn answered<T: Send + 'static>(answers: std_mpsc::Receiver<T>) -> T {
    tokio::task::spawn_blocking(move || answers.recv_timeout(GUARD).unwrap())
        .await
        .unwrap()
}

/// Runs an operation on the main queue of the entity behind `inbox` and waits for its reply.
pub(super) async fn execute_on(
    inbox: &mpsc::Sender<EntityCommand>,
    operation: Operation,
) -> Result<OperationResult, BrokerError> {
    let (done, outcome) = std_mpsc::channel();
    inbox
        .send(EntityCommand::Execute {
            sub_queue: SubQueue::Main,
            operation,
            reply: Box::new(move |result| {
                let _ = done.send(result);
            }),
        })
        .await
        .unwrap();
    answered(outcome).await
}

/// A link id as a connection engine assigns it: a client opens, begins and attaches a receiver.
pub(super) fn receiver_link() -> LinkId {
    let config = ConnectionConfig {
        require_sasl: false,
        ..ConnectionConfig::default()
    };
    let mut connection = Connection::new(config, Millis(0));
    let mut input = BytesMut::from(&ProtocolHeader::Amqp.to_bytes()[..]);
    let open = Open {
        container_id: "test".into(),
        hostname: None,
        max_frame_size: 65536,
        channel_max: 1,
        idle_time_out: None,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    let begin = Begin {
        remote_channel: None,
        next_outgoing_id: TransferNumber(0),
        incoming_window: 100,
        outgoing_window: 100,
        handle_max: Handle(1),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    let attach = Attach {
        name: "receiver".into(),
        handle: Handle(0),
        role: Role::Receiver,
        snd_settle_mode: SenderSettleMode::Unsettled,
        rcv_settle_mode: ReceiverSettleMode::First,
        source: Some(Box::new(Source::with_address("q"))),
        target: Some(Box::new(Target::with_address("client").into())),
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: None,
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    for (channel, frame) in [
        (0, Performative::from(open)),
        (0, begin.into()),
        (0, attach.into()),
    ] {
        encode_amqp_frame(channel, &frame, &[], &mut input);
    }
    connection.handle_input(&mut input, Millis(0));
    std::iter::from_fn(|| connection.poll_event())
        .find_map(|event| match event {
            Event::AttachRequested(request) => Some(request.link),
            _ => None,
        })
        .unwrap()
}

impl Harness {
    /// Registers a receive-and-delete receiver on the main queue with `credit`; its deliveries
    /// arrive on the returned channel.
    async fn receiver(&self, credit: u32) -> mpsc::Receiver<ConnectionCommand> {
        receiver_on(&self.inbox, credit).await
    }
}

/// Registers a receive-and-delete receiver with `credit` on the main queue of the entity behind
/// `inbox`; its deliveries arrive on the returned channel.
pub(super) async fn receiver_on(
    inbox: &mpsc::Sender<EntityCommand>,
    credit: u32,
) -> mpsc::Receiver<ConnectionCommand> {
    let (sender, deliveries) = mpsc::channel(16);
    let command = EntityCommand::Flow {
        receiver: ReceiverKey {
            connection: 1,
            link: receiver_link(),
        },
        sub_queue: SubQueue::Main,
        mode: ReceiveMode::ReceiveAndDelete,
        limit: credit,
        drain: false,
        mailbox: Mailbox::new(sender),
    };
    inbox.send(command).await.unwrap();
    deliveries
}

pub(super) fn message(id: &str) -> NewMessage {
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
    let mut deliveries = harness.receiver(10).await;
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
    // The receiver with credit got nothing of the rejected batch: a delivery would have been
    // posted in the same round as the enqueue, before the failed reply. The answered peek
    // shows the entity has handled everything sent before it.
    let peeked = harness
        .execute(Operation::Peek {
            from: SequenceNumber(1),
            count: 10,
        })
        .await;
    assert!(matches!(peeked, Ok(OperationResult::Messages(ref m)) if m.is_empty()));
    assert!(deliveries.try_recv().is_err());
    let mut storage = harness.stop().await;
    assert!(storage.recover().unwrap().messages.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_of_a_send_whose_sync_failed_is_not_acknowledged() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    let config = EntityConfig {
        duplicate_detection_window: Some(Duration::from_secs(60)),
        ..EntityConfig::default()
    };
    let harness = start_with(storage, busbar_core::Entity::new(config, 7).unwrap());
    let first = harness
        .execute(Operation::Enqueue(vec![message("a")]))
        .await;
    assert!(matches!(first, Err(BrokerError::StoreUnavailable { .. })));
    // The retry writes no record of its own (the entity remembers the id), yet it must not be
    // acknowledged: nothing of "a" was stored.
    let retry = harness
        .execute(Operation::Enqueue(vec![message("a")]))
        .await;
    assert!(matches!(retry, Err(BrokerError::StoreUnavailable { .. })));
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

pub(super) fn session_message(id: &str, session: &str) -> NewMessage {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_receiver_gets_a_message_once_its_insert_is_durable() {
    let harness = start(MemoryStorage::new());
    let mut deliveries = harness.receiver(10).await;
    harness
        .execute(Operation::Enqueue(vec![message("a")]))
        .await
        .unwrap();
    let delivered = tokio::time::timeout(GUARD, deliveries.recv())
        .await
        .unwrap();
    let Some(ConnectionCommand::Deliver { delivery, .. }) = delivered else {
        panic!("expected a delivery");
    };
    assert_eq!(delivery.sequence, SequenceNumber(1));
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_whose_sync_failed_leaves_no_session_behind() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    let core = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    let entity = SessionEntity::new(core, SessionLimits::default(), []);
    let harness = start_with(storage, entity);
    let failed = harness
        .execute(Operation::Enqueue(vec![session_message("a", "s1")]))
        .await;
    assert!(matches!(failed, Err(BrokerError::StoreUnavailable { .. })));
    // A ghost of the rejected message would list its session.
    let (done, outcome) = std_mpsc::channel();
    let list = SessionOperation::List {
        last_updated: busbar_sessions::LISTING_SENTINEL,
        skip: 0,
        top: 10,
    };
    harness
        .inbox
        .send(EntityCommand::Session {
            receiver: None,
            operation: list,
            reply: Box::new(move |result| {
                let _ = done.send(result);
            }),
        })
        .await
        .unwrap();
    let listed = tokio::task::spawn_blocking(move || outcome.recv_timeout(GUARD).unwrap())
        .await
        .unwrap();
    let Ok(OperationResult::Session(SessionResult::Sessions { ids, .. })) = listed else {
        panic!("listing failed: {listed:?}");
    };
    assert!(ids.is_empty(), "a rejected message left session {ids:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_lock_taken_under_a_session_lock_cannot_be_renewed_on_its_own() {
    let core = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    let entity = SessionEntity::new(core, SessionLimits::default(), []);
    let harness = start_with(MemoryStorage::new(), entity);
    harness
        .execute(Operation::Enqueue(vec![session_message("a", "s1")]))
        .await
        .unwrap();
    let receiver = ReceiverKey {
        connection: 1,
        link: receiver_link(),
    };
    let (sender, mut commands) = mpsc::channel(16);
    let mailbox = Mailbox::new(sender);
    let accept = EntityCommand::AcceptSession {
        receiver,
        session: Some("s1".to_owned()),
        wait_until: busbar_core::Timestamp(0),
        mailbox: mailbox.clone(),
    };
    harness.inbox.send(accept).await.unwrap();
    let flow = EntityCommand::Flow {
        receiver,
        sub_queue: SubQueue::Main,
        mode: ReceiveMode::PeekLock,
        limit: 1,
        drain: false,
        mailbox,
    };
    harness.inbox.send(flow).await.unwrap();
    let token = loop {
        match tokio::time::timeout(GUARD, commands.recv()).await.unwrap() {
            Some(ConnectionCommand::Deliver { delivery, .. }) => {
                break delivery.lock.unwrap().token;
            }
            Some(ConnectionCommand::SessionAccepted { .. }) => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    let renewed = harness.execute(Operation::RenewLock(vec![token])).await;
    assert!(
        matches!(renewed, Err(BrokerError::NotAllowed(ref reason)) if reason.contains("session lock")),
        "{renewed:?}"
    );
    // Answered after the round that locked the session set the gauge; the refusal is no renewal.
    let traffic = harness.metrics.traffic("q", 0);
    assert_eq!(traffic.open_sessions, 1);
    assert_eq!(traffic.lock_renewals, 0);
    // The message stays locked under its session: settling it still works.
    let completed = harness
        .execute(Operation::Settle {
            tokens: vec![token],
            outcome: Outcome::Complete,
        })
        .await;
    assert_eq!(completed, Ok(OperationResult::Done));
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settlements_of_one_read_are_applied_together_each_with_its_own_result() {
    let harness = start(MemoryStorage::new());
    harness
        .execute(Operation::Enqueue(vec![message("a"), message("b")]))
        .await
        .unwrap();
    let (sender, mut commands) = mpsc::channel(16);
    let flow = EntityCommand::Flow {
        receiver: ReceiverKey {
            connection: 1,
            link: receiver_link(),
        },
        sub_queue: SubQueue::Main,
        mode: ReceiveMode::PeekLock,
        limit: 2,
        drain: false,
        mailbox: Mailbox::new(sender),
    };
    harness.inbox.send(flow).await.unwrap();
    let mut tokens = Vec::new();
    while tokens.len() < 2 {
        match tokio::time::timeout(GUARD, commands.recv()).await.unwrap() {
            Some(ConnectionCommand::Deliver { delivery, .. }) => {
                tokens.push(delivery.lock.unwrap().token);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let unknown = busbar_core::LockToken::from_bytes([9; 16]);
    let (done, results) = std_mpsc::channel();
    let settle = EntityCommand::SettleDeliveries {
        settlements: vec![
            (tokens[0], Outcome::Complete),
            (unknown, Outcome::Complete),
            (
                tokens[1],
                Outcome::Abandon {
                    properties: busbar_core::Properties::new(),
                },
            ),
        ],
        reply: Box::new(move |results| {
            let _ = done.send(results);
        }),
    };
    harness.inbox.send(settle).await.unwrap();
    let results = answered(results).await;
    assert_eq!(results, [Ok(()), Err(BrokerError::MessageLockLost), Ok(())]);
    assert_eq!(harness.metrics.traffic("q", 0).lock_lost_answers, 1);
    // The completed message is gone; the abandoned one is back, delivered once before.
    let peeked = harness
        .execute(Operation::Peek {
            from: SequenceNumber(1),
            count: 10,
        })
        .await;
    let Ok(OperationResult::Messages(messages)) = peeked else {
        panic!("peek failed: {peeked:?}");
    };
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].delivery_count, 1);
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_message_lock_renewed_is_counted_and_a_refused_renewal_is_not() {
    let harness = start(MemoryStorage::new());
    harness
        .execute(Operation::Enqueue(vec![message("a"), message("b")]))
        .await
        .unwrap();
    let (sender, mut commands) = mpsc::channel(16);
    let flow = EntityCommand::Flow {
        receiver: ReceiverKey {
            connection: 1,
            link: receiver_link(),
        },
        sub_queue: SubQueue::Main,
        mode: ReceiveMode::PeekLock,
        limit: 2,
        drain: false,
        mailbox: Mailbox::new(sender),
    };
    harness.inbox.send(flow).await.unwrap();
    let mut tokens = Vec::new();
    while tokens.len() < 2 {
        match tokio::time::timeout(GUARD, commands.recv()).await.unwrap() {
            Some(ConnectionCommand::Deliver { delivery, .. }) => {
                tokens.push(delivery.lock.unwrap().token);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    let renewed = harness.execute(Operation::RenewLock(tokens.clone())).await;
    assert!(matches!(renewed, Ok(OperationResult::Expirations(ref at)) if at.len() == 2));
    let unknown = busbar_core::LockToken::from_bytes([9; 16]);
    let refused = harness.execute(Operation::RenewLock(vec![unknown])).await;
    assert_eq!(refused, Err(BrokerError::MessageLockLost));
    let traffic = harness.metrics.traffic("q", 0);
    assert_eq!(traffic.lock_renewals, 2);
    assert_eq!(traffic.session_locks_lost, 0);
    harness.stop().await;
}
