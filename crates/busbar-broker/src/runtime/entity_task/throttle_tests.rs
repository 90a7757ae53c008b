//! The entity task's throttling against `MemoryStorage`: past the bound of its inbox or of the
//! store's queue, sends are refused at once as server-busy while the rest is still served, and
//! sends are accepted again once the backlog is gone.

use std::sync::mpsc as std_mpsc;

use busbar_core::{EntityConfig, SequenceNumber, SubQueue};
use busbar_store::{EntityId, GroupCommit, GroupCommitOptions, MemoryStorage};
use tokio::sync::mpsc;

use super::tests::{GUARD, execute_on, message};
use super::{BATCH, EntityTask};
use crate::errors::BrokerError;
use crate::runtime::ENTITY_INBOX as INBOX;
use crate::runtime::clock::Clock;
use crate::runtime::mailbox::EntityCommand;
use crate::runtime::management::{Operation, OperationResult};
use crate::runtime::tests::insert;

fn task(writer: &GroupCommit<MemoryStorage>) -> EntityTask {
    let entity = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    EntityTask::new(entity, EntityId(1), Clock::anchored_now(), writer.handle())
}

fn send(index: usize, answers: &std_mpsc::Sender<(usize, bool)>) -> EntityCommand {
    let answers = answers.clone();
    EntityCommand::Execute {
        sub_queue: SubQueue::Main,
        operation: Operation::Enqueue(vec![message(&index.to_string())]),
        reply: Box::new(move |result| {
            let busy = matches!(result, Err(BrokerError::ServerBusy));
            assert!(busy || result.is_ok(), "{result:?}");
            let _ = answers.send((index, busy));
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_are_refused_as_busy_while_the_inbox_is_past_its_bound() {
    let writer = GroupCommit::spawn(MemoryStorage::new(), GroupCommitOptions::default()).unwrap();
    let (inbox, receiver) = mpsc::channel(INBOX);
    let (answers, answered_sends) = std_mpsc::channel();
    // A full inbox before the task starts: a backlog it cannot take in one batch.
    for index in 0..INBOX {
        inbox.try_send(send(index, &answers)).unwrap();
    }
    let task = tokio::spawn(task(&writer).run(receiver));
    let mut busy: Vec<usize> = tokio::task::spawn_blocking(move || {
        (0..INBOX)
            .map(|_| answered_sends.recv_timeout(GUARD).unwrap())
            .filter_map(|(index, busy)| busy.then_some(index))
            .collect()
    })
    .await
    .unwrap();
    busy.sort_unstable();
    // The first batch, taken while three quarters of the inbox waited behind it, is refused;
    // the next ones, with less behind them, are stored.
    assert_eq!(busy, (0..BATCH).collect::<Vec<_>>());
    let stored = execute_on(
        &inbox,
        Operation::Peek {
            from: SequenceNumber(1),
            count: 2_000,
        },
    )
    .await;
    let Ok(OperationResult::Messages(messages)) = stored else {
        panic!("{stored:?}");
    };
    assert_eq!(messages.len(), INBOX - BATCH);
    // The backlog gone, a send is accepted again.
    assert!(
        execute_on(&inbox, Operation::Enqueue(vec![message("after")]))
            .await
            .is_ok()
    );
    drop(inbox);
    task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_are_refused_as_busy_while_the_store_queue_is_past_its_bound() {
    let options = GroupCommitOptions {
        queue_capacity: 4,
        compaction: false,
    };
    let writer = GroupCommit::spawn(MemoryStorage::new(), options).unwrap();
    let store = writer.handle();
    // The writer is held in a completion while three submissions queue behind it.
    let (entered, writer_entered) = std_mpsc::channel();
    let (release, released) = std_mpsc::channel::<()>();
    store.submit(
        insert(1_000),
        Box::new(move |_| {
            entered.send(()).unwrap();
            let _ = released.recv();
        }),
    );
    tokio::task::spawn_blocking(move || writer_entered.recv_timeout(GUARD).unwrap())
        .await
        .unwrap();
    for sequence in 1_001..1_004 {
        store
            .try_submit(insert(sequence), Box::new(|_| {}))
            .unwrap();
    }
    let (inbox, receiver) = mpsc::channel(INBOX);
    let task = tokio::spawn(task(&writer).run(receiver));

    let refused = execute_on(&inbox, Operation::Enqueue(vec![message("a")])).await;
    assert!(
        matches!(refused, Err(BrokerError::ServerBusy)),
        "{refused:?}"
    );
    // What is not a send is still served.
    let peeked = execute_on(
        &inbox,
        Operation::Peek {
            from: SequenceNumber(1),
            count: 1,
        },
    )
    .await;
    assert!(matches!(peeked, Ok(OperationResult::Messages(ref m)) if m.is_empty()));

    release.send(()).unwrap();
    let mut accepted = execute_on(&inbox, Operation::Enqueue(vec![message("b")])).await;
    // The store's queue empties as soon as the writer takes it; until then, busy again.
    while matches!(accepted, Err(BrokerError::ServerBusy)) {
        tokio::task::yield_now().await;
        accepted = execute_on(&inbox, Operation::Enqueue(vec![message("b")])).await;
    }
    assert!(accepted.is_ok(), "{accepted:?}");
    drop(inbox);
    task.await.unwrap();
}
