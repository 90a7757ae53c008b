//! A transaction's session state at the commit: set for the receive link holding the session,
//! and refused — changing nothing — when that link does not hold it.

use std::sync::mpsc as std_mpsc;

use busbar_core::EntityConfig;
use busbar_sessions::{SessionEntity, SessionLimits};
use busbar_store::MemoryStorage;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::tests::{GUARD, Harness, answered, receiver_link, session_message, start_with};
use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, Mailbox, ReceiverKey};
use crate::runtime::management::{Operation, OperationResult, SessionOperation, SessionResult};
use crate::runtime::transaction::{TransactionCommit, TransactionWork};

/// A session entity whose session `s1` is held by the returned receive link.
async fn holding_s1() -> (Harness, ReceiverKey) {
    let core = busbar_core::Entity::new(EntityConfig::default(), 7).unwrap();
    let entity = SessionEntity::new(core, SessionLimits::default(), []);
    let harness = start_with(MemoryStorage::new(), entity);
    super::tests::execute_on(
        &harness.inbox,
        Operation::Enqueue(vec![session_message("a", "s1")]),
    )
    .await
    .unwrap();
    let receiver = ReceiverKey {
        connection: 1,
        link: receiver_link(),
    };
    let (sender, mut commands) = mpsc::channel(16);
    let accept = EntityCommand::AcceptSession {
        receiver,
        session: Some("s1".to_owned()),
        wait_until: busbar_core::Timestamp(0),
        mailbox: Mailbox::new(sender),
    };
    harness.inbox.send(accept).await.unwrap();
    match tokio::time::timeout(GUARD, commands.recv()).await.unwrap() {
        Some(ConnectionCommand::SessionAccepted { .. }) => {}
        other => panic!("unexpected {other:?}"),
    }
    (harness, receiver)
}

/// Commits a transaction setting `s1`'s state to `state` for `receiver`.
async fn commit_state(
    harness: &Harness,
    receiver: Option<ReceiverKey>,
    state: &'static [u8],
) -> Result<(), BrokerError> {
    let (done, outcome) = std_mpsc::channel();
    let commit = TransactionCommit {
        settlements: vec![TransactionWork::SessionState {
            receiver,
            session: "s1".to_owned(),
            state: Some(Bytes::from_static(state)),
        }],
        parts: Vec::new(),
        done: Box::new(move |result| {
            let _ = done.send(result);
        }),
    };
    harness
        .inbox
        .send(EntityCommand::CommitTransaction(commit))
        .await
        .unwrap();
    answered(outcome).await
}

/// `s1`'s state as its holder reads it.
async fn state_of_s1(harness: &Harness, receiver: ReceiverKey) -> Option<Bytes> {
    let (done, outcome) = std_mpsc::channel();
    let command = EntityCommand::Session {
        receiver: Some(receiver),
        operation: SessionOperation::State {
            session: "s1".to_owned(),
        },
        reply: Box::new(move |result| {
            let _ = done.send(result);
        }),
    };
    harness.inbox.send(command).await.unwrap();
    let answer = answered(outcome).await;
    let Ok(OperationResult::Session(SessionResult::State(state))) = answer else {
        panic!("get-session-state failed: {answer:?}");
    };
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_session_state_is_set_for_the_link_holding_the_session() {
    let (harness, receiver) = holding_s1().await;
    assert_eq!(
        commit_state(&harness, Some(receiver), b"step-2").await,
        Ok(())
    );
    assert_eq!(
        state_of_s1(&harness, receiver).await,
        Some(Bytes::from_static(b"step-2"))
    );
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_state_for_a_link_not_holding_the_session_is_refused_and_changes_nothing() {
    let (harness, receiver) = holding_s1().await;
    assert_eq!(
        commit_state(&harness, Some(receiver), b"kept").await,
        Ok(())
    );
    let stranger = ReceiverKey {
        connection: 2,
        link: receiver_link(),
    };
    assert_eq!(
        commit_state(&harness, Some(stranger), b"lost").await,
        Err(BrokerError::SessionLockLost)
    );
    assert_eq!(
        commit_state(&harness, None, b"lost").await,
        Err(BrokerError::SessionLockLost)
    );
    assert_eq!(
        state_of_s1(&harness, receiver).await,
        Some(Bytes::from_static(b"kept"))
    );
    harness.stop().await;
}
