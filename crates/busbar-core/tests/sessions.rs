//! The session index of the main queue: next message of a session, wake-ups, lock expiry set
//! by the caller, and the index surviving every stage change and a replay.

mod common;

use busbar_core::{
    EntityConfig, NewMessage, Outcome, Properties, ReceiveMode, SequenceNumber, SubQueue,
};
use common::*;

fn in_session(payload: &'static str, session: &str) -> NewMessage {
    NewMessage {
        session_id: Some(session.to_owned()),
        ..message(payload)
    }
}

#[test]
fn receive_from_session_serves_that_session_in_sequence_order() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, in_session("a1", "a"), at(0));
    send(&mut queue, in_session("b1", "b"), at(0));
    send(&mut queue, in_session("a2", "a"), at(0));
    send(&mut queue, message("plain"), at(0));
    let until = at(30_000);
    let first = queue
        .receive_from_session("a", ReceiveMode::PeekLock, until, at(1))
        .unwrap();
    assert_eq!(payload(&first), b"a1");
    assert_eq!(first.lock.unwrap().locked_until, until);
    let second = queue
        .receive_from_session("a", ReceiveMode::PeekLock, until, at(1))
        .unwrap();
    assert_eq!(payload(&second), b"a2");
    assert!(
        queue
            .receive_from_session("a", ReceiveMode::PeekLock, until, at(1))
            .is_none()
    );
    assert!(
        queue
            .receive_from_session("zzz", ReceiveMode::PeekLock, until, at(1))
            .is_none()
    );
    queue.check_invariants().unwrap();
}

#[test]
fn abandon_makes_the_same_message_the_next_one_of_its_session() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, in_session("a1", "a"), at(0));
    send(&mut queue, in_session("a2", "a"), at(0));
    let until = at(60_000);
    let first = queue
        .receive_from_session("a", ReceiveMode::PeekLock, until, at(0))
        .unwrap();
    let token = first.lock.unwrap().token;
    let abandon = Outcome::Abandon {
        properties: Properties::new(),
    };
    queue.settle(token, abandon, at(1)).unwrap();
    let again = queue
        .receive_from_session("a", ReceiveMode::PeekLock, until, at(2))
        .unwrap();
    assert_eq!(again.sequence, first.sequence);
    assert_eq!(again.delivery_count, 1);
    queue.check_invariants().unwrap();
}

#[test]
fn sessions_report_a_first_available_message_once_until_taken() {
    let mut queue = entity(EntityConfig::default());
    assert!(queue.take_newly_available_sessions().is_empty());
    send(&mut queue, in_session("a1", "a"), at(0));
    send(&mut queue, in_session("a2", "a"), at(0));
    send(&mut queue, message("plain"), at(0));
    assert_eq!(queue.take_newly_available_sessions(), vec!["a".to_owned()]);
    assert!(queue.take_newly_available_sessions().is_empty());
    // Emptying and refilling the session's available set wakes it again.
    let until = at(60_000);
    let one = queue
        .receive_from_session("a", ReceiveMode::PeekLock, until, at(0))
        .unwrap();
    queue
        .receive_from_session("a", ReceiveMode::ReceiveAndDelete, until, at(0))
        .unwrap();
    assert!(!queue.session_has_available("a"));
    assert!(queue.session_has_messages("a"));
    queue
        .settle(one.lock.unwrap().token, Outcome::Release, at(1))
        .unwrap();
    assert_eq!(queue.take_newly_available_sessions(), vec!["a".to_owned()]);
    // A session whose messages all went before anyone looked is not reported.
    send(&mut queue, in_session("b1", "b"), at(2));
    queue
        .receive_from_session("b", ReceiveMode::ReceiveAndDelete, until, at(2))
        .unwrap();
    assert!(queue.take_newly_available_sessions().is_empty());
    assert!(!queue.session_has_messages("b"));
    queue.check_invariants().unwrap();
}

#[test]
fn a_scheduled_message_wakes_its_session_when_it_activates() {
    let mut queue = entity(EntityConfig::default());
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(5_000)),
        ..in_session("later", "s")
    };
    send(&mut queue, scheduled, at(0));
    assert!(queue.take_newly_available_sessions().is_empty());
    assert!(queue.session_has_messages("s"));
    assert!(!queue.session_has_available("s"));
    queue.handle_timeout(at(5_000));
    assert_eq!(queue.take_newly_available_sessions(), vec!["s".to_owned()]);
    assert!(queue.session_has_available("s"));
}

#[test]
fn a_lock_expires_when_the_caller_says_and_counts_a_delivery() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, in_session("a1", "a"), at(0));
    let delivery = queue
        .receive_from_session("a", ReceiveMode::PeekLock, at(10_000), at(0))
        .unwrap();
    let token = delivery.lock.unwrap().token;
    assert_eq!(queue.poll_timeout(), Some(at(10_000)));
    queue.set_lock_expiry(token, at(20_000), at(9_000)).unwrap();
    assert_eq!(queue.poll_timeout(), Some(at(20_000)));
    queue.handle_timeout(at(19_999));
    assert_eq!(queue.locks_held(), 1);
    queue.handle_timeout(at(20_000));
    assert_eq!(queue.locks_held(), 0);
    assert!(
        queue
            .set_lock_expiry(token, at(30_000), at(20_000))
            .is_err()
    );
    let again = queue
        .receive_from_session("a", ReceiveMode::PeekLock, at(40_000), at(20_001))
        .unwrap();
    assert_eq!(again.delivery_count, 1);
    queue.check_invariants().unwrap();
}

#[test]
fn the_index_lists_sessions_with_messages_in_any_state_and_survives_replay() {
    let mut store = SimulatedStore::default();
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, in_session("a1", "a"), at(0));
    let b = send(&mut queue, in_session("b1", "b"), at(0));
    let delivery = queue
        .receive_from_session("b", ReceiveMode::PeekLock, at(60_000), at(0))
        .unwrap();
    let defer = Outcome::Defer {
        properties: Properties::new(),
    };
    queue
        .settle(delivery.lock.unwrap().token, defer, at(0))
        .unwrap();
    assert_eq!(queue.session_of(b), Some("b"));
    assert_eq!(queue.session_of(SequenceNumber(99)), None);
    let mut sessions: Vec<_> = queue.sessions().map(str::to_owned).collect();
    sessions.sort();
    assert_eq!(sessions, ["a", "b"]);
    assert!(!queue.session_has_available("b"));
    store.apply(queue.drain_records());
    let mut restored = store.restore(EntityConfig::default(), at(1));
    restored.check_invariants().unwrap();
    let mut sessions: Vec<_> = restored.sessions().map(str::to_owned).collect();
    sessions.sort();
    assert_eq!(sessions, ["a", "b"]);
    assert_eq!(
        restored.take_newly_available_sessions(),
        vec!["a".to_owned()]
    );
    assert_eq!(restored.len(SubQueue::Main), 2);
}

#[test]
fn peek_session_browses_one_session_in_order_without_locking() {
    let mut queue = entity(EntityConfig::default());
    let a1 = send(&mut queue, in_session("a1", "a"), at(0));
    send(&mut queue, in_session("b1", "b"), at(0));
    let a2 = send(&mut queue, in_session("a2", "a"), at(0));
    let a3 = send(&mut queue, in_session("a3", "a"), at(0));
    let locked = queue
        .receive_from_session("a", ReceiveMode::PeekLock, at(60_000), at(0))
        .unwrap();
    assert_eq!(locked.sequence, a1);
    let all: Vec<_> = queue
        .peek_session("a", SequenceNumber::FIRST, 10, at(1))
        .iter()
        .map(|delivery| (delivery.sequence, delivery.lock))
        .collect();
    assert_eq!(all, [(a1, None), (a2, None), (a3, None)]);
    let page: Vec<_> = queue
        .peek_session("a", a2, 1, at(1))
        .iter()
        .map(|delivery| delivery.sequence)
        .collect();
    assert_eq!(page, [a2]);
    assert!(
        queue
            .peek_session("none", SequenceNumber::FIRST, 10, at(1))
            .is_empty()
    );
    assert_eq!(queue.locks_held(), 1);
    queue.check_invariants().unwrap();
}
