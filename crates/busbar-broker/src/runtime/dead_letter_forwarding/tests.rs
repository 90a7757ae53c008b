//! `ForwardDeadLetteredMessagesTo` at the entity-task level, on `MemoryStorage`: a message in a
//! forwarding entity's dead-letter sub-queue reaches the destination with its reason and then
//! leaves the source; a destination that refuses it leaves it where it is.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use busbar_amqp::message::{ApplicationProperties, Message, MessageBuilder};
use busbar_amqp::types::Value;
use busbar_core::{
    DeadLetterInfo, Entity, NewMessage, Outcome, Properties, ReceiveMode, SequenceNumber, SubQueue,
    Timestamp,
};
use busbar_store::{GroupCommit, GroupCommitOptions, MemoryStorage, Recovered, Storage};
use bytes::Bytes;
use tokio::sync::mpsc;

use super::DeadLetterForwarding;
use crate::address::EntityPath;
use crate::errors::BrokerError;
use crate::runtime::clock::Clock;
use crate::runtime::entity_task::{EntityTask, OwnedEntity};
use crate::runtime::mailbox::EntityCommand;
use crate::runtime::management::{Operation, OperationResult};
use crate::runtime::registry::{self, Resolved};

/// Failure guard for replies that must come; never reached when the code is right.
const GUARD: Duration = Duration::from_secs(10);

const CONFIG: &str = r#"{ "UserConfig": { "Namespaces": [ { "Name": "sbemulatorns",
    "Queues": [
        { "Name": "src", "Properties": { "ForwardDeadLetteredMessagesTo": "dst" } },
        { "Name": "dst", "Properties": {} },
        { "Name": "src-session", "Properties": { "ForwardDeadLetteredMessagesTo": "dst-session" } },
        { "Name": "dst-session", "Properties": { "RequiresSession": true } } ],
    "Topics": [] } ],
    "Logging": { "Type": "Console" } } }"#;

/// An entity holding one message, dead-lettered with reason "Bad" (as a restart finds it).
fn with_dead_letter(spec: &registry::EntitySpec, now: Timestamp) -> Entity {
    let mut entity = Entity::new(spec.config.clone(), 7).unwrap();
    let payload = MessageBuilder::new()
        .application_properties(ApplicationProperties(vec![("kept".into(), Value::Int(1))]))
        .data(Bytes::from_static(b"poison"))
        .build()
        .into_bytes();
    let message = crate::runtime::inbound::new_message(Message::parse(payload).unwrap()).unwrap();
    entity.enqueue(vec![message], now).unwrap();
    entity.mark_durable(SequenceNumber(1));
    let lock = entity
        .receive(SubQueue::Main, ReceiveMode::PeekLock, now)
        .unwrap()
        .lock
        .unwrap();
    let info = DeadLetterInfo {
        reason: Some("Bad".into()),
        description: Some("why".into()),
    };
    let outcome = Outcome::DeadLetter {
        info,
        properties: Properties::new(),
    };
    entity.settle(lock.token, outcome, now).unwrap();
    entity
}

async fn execute(
    inbox: &mpsc::Sender<EntityCommand>,
    sub_queue: SubQueue,
    operation: Operation,
) -> Result<OperationResult, BrokerError> {
    let (done, outcome) = std_mpsc::channel();
    let reply = Box::new(move |result| {
        let _ = done.send(result);
    });
    let command = EntityCommand::Execute {
        sub_queue,
        operation,
        reply,
    };
    inbox.send(command).await.unwrap();
    tokio::task::spawn_blocking(move || outcome.recv_timeout(GUARD).unwrap())
        .await
        .unwrap()
}

async fn peek(inbox: &mpsc::Sender<EntityCommand>, sub_queue: SubQueue) -> Vec<NewMessage> {
    let operation = Operation::Peek {
        from: SequenceNumber(1),
        count: 10,
    };
    match execute(inbox, sub_queue, operation).await {
        Ok(OperationResult::Messages(messages)) => messages
            .iter()
            .map(|delivery| NewMessage {
                payload: crate::runtime::outbound::delivered_message(delivery)
                    .unwrap()
                    .into_bytes(),
                ..NewMessage::default()
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn application_property(message: &NewMessage, key: &str) -> Option<Value> {
    let message = Message::from_bytes(message.payload.clone());
    message.application_properties().unwrap()?.get(key).cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_lettered_message_moves_to_the_destination_and_a_refused_one_stays() {
    let namespace = crate::config::parse(CONFIG, "test.json").unwrap().namespace;
    let (registry, specs, _) = registry::build(&namespace, &Recovered::default(), 16).unwrap();
    let registry = Arc::new(crate::runtime::live_registry::LiveRegistry::new(registry));
    let clock = Clock::anchored_now();
    let now = clock.now();
    // The dead-lettered messages are durable, as after a restart.
    let mut storage = MemoryStorage::new();
    let mut entities = Vec::new();
    for spec in &specs {
        let mut entity = OwnedEntity::from(if spec.forward_dead_letters_to.is_some() {
            with_dead_letter(spec, now)
        } else {
            Entity::new(spec.config.clone(), 7).unwrap()
        });
        storage.append(&entity.drain_records(spec.id)).unwrap();
        entities.push(entity);
    }
    storage.sync().unwrap();
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default()).unwrap();
    let mut inboxes = Vec::new();
    let mut tasks = Vec::new();
    for (spec, entity) in specs.into_iter().zip(entities) {
        let mut task = EntityTask::new(entity, spec.id, clock.clone(), writer.handle());
        if let Some(destination) = spec.forward_dead_letters_to {
            let forwarding =
                DeadLetterForwarding::new(destination, Arc::downgrade(&registry), spec.own_inbox);
            task = task.forwarding_dead_letters(forwarding);
        }
        inboxes.push(spec.inbox);
        tasks.push(task);
    }
    for (task, inbox) in tasks.into_iter().zip(inboxes) {
        tokio::spawn(task.run(inbox));
    }
    let inbox_of = |name: &str| match registry
        .current()
        .resolve(&EntityPath::QueueOrTopic(name.into()))
    {
        Some(Resolved::Entity(entity)) => entity.inbox.clone(),
        _ => panic!("{name} is not a queue"),
    };
    let (src, dst, src_session) = (inbox_of("src"), inbox_of("dst"), inbox_of("src-session"));

    // The session destination refuses a message without SessionId at once; the answer is in
    // the source's inbox before a second request, so that request sees the outcome.
    peek(&src_session, SubQueue::DeadLetter).await;
    assert_eq!(peek(&src_session, SubQueue::DeadLetter).await.len(), 1);

    // The destination gets the message with its reason; then the source lets it go.
    let deadline = std::time::Instant::now() + GUARD;
    while !peek(&src, SubQueue::DeadLetter).await.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "never left the source"
        );
        tokio::task::yield_now().await;
    }
    let [forwarded] = &peek(&dst, SubQueue::Main).await[..] else {
        panic!("one forwarded message expected");
    };
    assert_eq!(
        application_property(forwarded, "DeadLetterReason"),
        Some(Value::from("Bad"))
    );
    assert_eq!(
        application_property(forwarded, "DeadLetterErrorDescription"),
        Some(Value::from("why"))
    );
    assert_eq!(application_property(forwarded, "kept"), Some(Value::Int(1)));
    assert!(peek(&dst, SubQueue::DeadLetter).await.is_empty());
}
