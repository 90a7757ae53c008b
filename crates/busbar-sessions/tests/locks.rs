//! Session locks, one scenario each: FIFO per session, exclusive locks, accept named / next
//! available with waiting and fairness, renewal, expiry, release, abandon, deferral and
//! request-response through reply-to-session-id.

mod common;

use busbar_core::{Outcome, ReceiveMode, SequenceNumber, SubQueue};
use busbar_sessions::{AcceptNext, ReceiverId, SessionError, SessionEvent};
use common::*;

#[test]
fn messages_of_a_session_come_in_order_while_sessions_interleave() {
    let mut entity = entity();
    for i in 0..5 {
        send(&mut entity, &format!("a{i}"), "a", at(0));
        send(&mut entity, &format!("b{i}"), "b", at(0));
    }
    let a = accept_next(&mut entity, 1, at(1));
    let b = accept_next(&mut entity, 2, at(1));
    assert_eq!((a.session.as_str(), b.session.as_str()), ("a", "b"));
    for i in 0..5 {
        for lock in [&a, &b] {
            let delivery = receive(&mut entity, lock, at(2)).unwrap();
            assert_eq!(text(&delivery), format!("{}{i}", lock.session));
            assert_eq!(delivery.session_id.as_deref(), Some(lock.session.as_str()));
            settle(&mut entity, lock, &delivery, Outcome::Complete, at(2));
        }
    }
    assert!(receive(&mut entity, &a, at(3)).is_none());
    assert!(entity.core().is_empty(SubQueue::Main));
    entity.check_invariants().unwrap();
}

#[test]
fn a_message_without_session_id_is_refused_and_nothing_is_stored() {
    let mut entity = entity();
    let batch = vec![in_session("ok", "s"), busbar_core::NewMessage::default()];
    assert_eq!(
        entity.enqueue(batch, at(0)),
        Err(SessionError::SessionIdRequired)
    );
    assert!(entity.core().is_empty(SubQueue::Main));
    assert!(!entity.core().has_records());
}

#[test]
fn a_named_session_held_by_another_receiver_cannot_be_locked() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let lock = entity.accept_named(ReceiverId(1), sid("s"), at(0)).unwrap();
    assert_eq!(lock.locked_until, at(LOCK_MS));
    assert_eq!(
        entity.accept_named(ReceiverId(2), sid("s"), at(1)),
        Err(SessionError::CannotBeLocked(sid("s")))
    );
    // A receiver holds one session at a time.
    assert_eq!(
        entity.accept_named(ReceiverId(1), sid("t"), at(1)),
        Err(SessionError::ReceiverBusy(1))
    );
    // The other receiver cannot read or settle the session either.
    assert_eq!(
        entity.receive(ReceiverId(2), &sid("s"), ReceiveMode::PeekLock, at(1)),
        Err(SessionError::LockLost(sid("s")))
    );
    // An empty session can be locked by name.
    let empty = entity
        .accept_named(ReceiverId(2), sid("empty"), at(1))
        .unwrap();
    assert!(receive(&mut entity, &empty, at(1)).is_none());
    entity.check_invariants().unwrap();
}

#[test]
fn two_receivers_get_different_sessions_and_a_third_waits() {
    let mut entity = entity();
    send(&mut entity, "a", "a", at(0));
    send(&mut entity, "b", "b", at(0));
    let first = accept_next(&mut entity, 1, at(0));
    let second = accept_next(&mut entity, 2, at(0));
    assert_ne!(first.session, second.session);
    assert_eq!(
        entity.accept_next(ReceiverId(3), at(10_000), at(0)),
        Ok(AcceptNext::Waiting)
    );
    assert_eq!(entity.waiting_len(), 1);
    entity.check_invariants().unwrap();
}

#[test]
fn a_waiting_receiver_gets_a_session_that_receives_its_first_message() {
    let mut entity = entity();
    assert_eq!(
        entity.accept_next(ReceiverId(1), at(10_000), at(0)),
        Ok(AcceptNext::Waiting)
    );
    assert_eq!(entity.poll_timeout(), Some(at(10_000)));
    assert_eq!(entity.poll_event(), None);
    send(&mut entity, "hello", "new", at(5_000));
    let Some(SessionEvent::Accepted(lock)) = entity.poll_event() else {
        panic!("the waiter should have been served");
    };
    assert_eq!((lock.owner, lock.session.as_str()), (ReceiverId(1), "new"));
    assert_eq!(lock.locked_until, at(5_000 + LOCK_MS));
    assert_eq!(
        text(&receive(&mut entity, &lock, at(5_000)).unwrap()),
        "hello"
    );
    entity.check_invariants().unwrap();
}

#[test]
fn a_held_copy_opens_its_session_to_a_waiter_only_once_released() {
    let mut entity = entity();
    assert_eq!(
        entity.accept_next(ReceiverId(1), at(10_000), at(0)),
        Ok(AcceptNext::Waiting)
    );
    let held = entity
        .hold(vec![in_session("hello", "new")], at(1_000))
        .unwrap();
    entity.mark_durable(SequenceNumber(i64::MAX), at(1_000));
    assert_eq!(entity.poll_event(), None, "a held copy opened its session");
    assert_eq!(
        entity.hold(vec![busbar_core::NewMessage::default()], at(1_000)),
        Err(SessionError::SessionIdRequired)
    );
    entity.release_held(&held.sequences(), at(2_000));
    let Some(SessionEvent::Accepted(lock)) = entity.poll_event() else {
        panic!("the waiter should have been served");
    };
    assert_eq!(
        text(&receive(&mut entity, &lock, at(2_000)).unwrap()),
        "hello"
    );
    entity.check_invariants().unwrap();
}

#[test]
fn a_waiting_receiver_gets_a_session_another_releases() {
    let mut entity = entity();
    send(&mut entity, "m1", "s", at(0));
    send(&mut entity, "m2", "s", at(0));
    let holder = accept_next(&mut entity, 1, at(0));
    let first = receive(&mut entity, &holder, at(0)).unwrap();
    settle(&mut entity, &holder, &first, Outcome::Complete, at(0));
    assert_eq!(
        entity.accept_next(ReceiverId(2), at(20_000), at(1)),
        Ok(AcceptNext::Waiting)
    );
    entity.close_receiver(ReceiverId(1), at(2));
    let Some(SessionEvent::Accepted(lock)) = entity.poll_event() else {
        panic!("the released session should go to the waiter");
    };
    assert_eq!(lock.owner, ReceiverId(2));
    assert_eq!(text(&receive(&mut entity, &lock, at(3)).unwrap()), "m2");
    entity.check_invariants().unwrap();
}

#[test]
fn a_wait_times_out_at_its_deadline_and_a_cancelled_wait_is_forgotten() {
    let mut entity = entity();
    entity.accept_next(ReceiverId(1), at(1_000), at(0)).unwrap();
    entity.accept_next(ReceiverId(2), at(2_000), at(0)).unwrap();
    entity.close_receiver(ReceiverId(2), at(500));
    entity.handle_timeout(at(999));
    assert_eq!(entity.poll_event(), None);
    entity.handle_timeout(at(1_000));
    assert_eq!(
        entity.poll_event(),
        Some(SessionEvent::AcceptTimedOut {
            owner: ReceiverId(1)
        })
    );
    assert_eq!(entity.poll_timeout(), None);
    entity.handle_timeout(at(5_000));
    assert_eq!(entity.poll_event(), None);
    // A deadline already past times out at once.
    assert_eq!(
        entity.accept_next(ReceiverId(3), at(5_000), at(5_000)),
        Ok(AcceptNext::Waiting)
    );
    assert_eq!(
        entity.poll_event(),
        Some(SessionEvent::AcceptTimedOut {
            owner: ReceiverId(3)
        })
    );
    assert_eq!(entity.waiting_len(), 0);
    entity.check_invariants().unwrap();
}

#[test]
fn sessions_are_handed_out_round_robin_so_none_starves() {
    let mut entity = entity();
    for session in ["a", "b", "c"] {
        for i in 0..3 {
            send(&mut entity, &format!("{session}{i}"), session, at(0));
        }
    }
    let mut order = Vec::new();
    for round in 0..6 {
        let owner = 10 + round;
        let lock = accept_next(&mut entity, owner, at(round as i64));
        let delivery = receive(&mut entity, &lock, at(round as i64)).unwrap();
        settle(
            &mut entity,
            &lock,
            &delivery,
            Outcome::Complete,
            at(round as i64),
        );
        order.push(lock.session.to_string());
        entity.close_receiver(ReceiverId(owner), at(round as i64));
    }
    assert_eq!(order, ["a", "b", "c", "a", "b", "c"]);
}

#[test]
fn waiting_receivers_are_served_oldest_first() {
    let mut entity = entity();
    for owner in 1..=3 {
        entity
            .accept_next(ReceiverId(owner), at(60_000), at(owner as i64))
            .unwrap();
    }
    for session in ["x", "y", "z"] {
        send(&mut entity, session, session, at(10));
    }
    let served: Vec<_> = std::iter::from_fn(|| entity.poll_event())
        .map(|event| match event {
            SessionEvent::Accepted(lock) => (lock.owner.0, lock.session.to_string()),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        served,
        [
            (1, "x".to_owned()),
            (2, "y".to_owned()),
            (3, "z".to_owned())
        ]
    );
}

#[test]
fn a_session_lock_covers_messages_that_arrive_later() {
    let mut entity = entity();
    send(&mut entity, "first", "s", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    send(&mut entity, "later", "s", at(1));
    // Nobody else can take the session meanwhile.
    assert_eq!(
        entity.accept_next(ReceiverId(2), at(1), at(1)),
        Ok(AcceptNext::Waiting)
    );
    assert_eq!(
        entity.poll_event(),
        Some(SessionEvent::AcceptTimedOut {
            owner: ReceiverId(2)
        })
    );
    assert_eq!(text(&receive(&mut entity, &lock, at(2)).unwrap()), "first");
    let later = receive(&mut entity, &lock, at(2)).unwrap();
    assert_eq!(text(&later), "later");
    // Messages are locked as long as the session.
    assert_eq!(later.lock.unwrap().locked_until, lock.locked_until);
}

#[test]
fn abandon_serves_the_same_message_again() {
    let mut entity = entity();
    send(&mut entity, "m1", "s", at(0));
    send(&mut entity, "m2", "s", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    let m1 = receive(&mut entity, &lock, at(0)).unwrap();
    let m2 = receive(&mut entity, &lock, at(0)).unwrap();
    settle(&mut entity, &lock, &m1, abandon(), at(1));
    let again = receive(&mut entity, &lock, at(2)).unwrap();
    assert_eq!(again.sequence, m1.sequence);
    assert_eq!(again.delivery_count, 1);
    settle(&mut entity, &lock, &again, Outcome::Complete, at(3));
    settle(&mut entity, &lock, &m2, Outcome::Complete, at(3));
    assert!(receive(&mut entity, &lock, at(4)).is_none());
}

#[test]
fn renewal_extends_the_session_and_its_message_locks() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    let delivery = receive(&mut entity, &lock, at(0)).unwrap();
    let renewed = entity.renew(lock.owner, &lock.session, at(20_000)).unwrap();
    assert_eq!(renewed, at(20_000 + LOCK_MS));
    assert_eq!(entity.lock_of(&lock.session).unwrap().locked_until, renewed);
    entity.handle_timeout(at(LOCK_MS + 1));
    assert_eq!(entity.poll_event(), None);
    settle(
        &mut entity,
        &lock,
        &delivery,
        Outcome::Complete,
        at(LOCK_MS + 2),
    );
    assert_eq!(
        entity.renew(ReceiverId(9), &lock.session, at(LOCK_MS + 3)),
        Err(SessionError::LockLost(sid("s")))
    );
    entity.check_invariants().unwrap();
}

#[test]
fn expiry_frees_the_session_counts_a_delivery_and_fails_the_old_holder() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let old = accept_next(&mut entity, 1, at(0));
    let delivery = receive(&mut entity, &old, at(0)).unwrap();
    assert_eq!(entity.poll_timeout(), Some(at(LOCK_MS)));
    entity.handle_timeout(at(LOCK_MS));
    assert_eq!(
        entity.poll_event(),
        Some(SessionEvent::LockLost {
            owner: ReceiverId(1),
            session: sid("s")
        })
    );
    let token = delivery.lock.unwrap().token;
    assert_eq!(
        entity.settle(
            old.owner,
            &old.session,
            token,
            Outcome::Complete,
            at(LOCK_MS + 1)
        ),
        Err(SessionError::LockLost(sid("s")))
    );
    assert_eq!(
        entity.renew(old.owner, &old.session, at(LOCK_MS + 1)),
        Err(SessionError::LockLost(sid("s")))
    );
    let new = accept_next(&mut entity, 2, at(LOCK_MS + 1));
    let again = receive(&mut entity, &new, at(LOCK_MS + 1)).unwrap();
    assert_eq!(
        (again.sequence, again.delivery_count),
        (delivery.sequence, 1)
    );
    // The old token cannot settle the new delivery either.
    assert_eq!(
        entity.settle(
            new.owner,
            &new.session,
            token,
            Outcome::Complete,
            at(LOCK_MS + 2)
        ),
        Err(SessionError::MessageLockLost)
    );
    entity.check_invariants().unwrap();
}

#[test]
fn expiry_is_noticed_by_any_operation_even_before_the_timer_fires() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let old = accept_next(&mut entity, 1, at(0));
    receive(&mut entity, &old, at(0)).unwrap();
    // The driver's timer is late; a competing accept still sees the lock gone.
    let new = accept_next(&mut entity, 2, at(LOCK_MS + 5));
    assert_eq!(new.session, old.session);
    assert!(matches!(
        entity.poll_event(),
        Some(SessionEvent::LockLost { .. })
    ));
    assert_eq!(
        receive(&mut entity, &new, at(LOCK_MS + 5))
            .unwrap()
            .delivery_count,
        1
    );
}

/// Simulates the store: message records and state records, then a restart.

#[test]
fn request_response_through_reply_to_session_id() {
    let mut entity = entity();
    // The requester names its reply session and waits on it before any reply exists.
    let requester = entity
        .accept_named(ReceiverId(1), sid("reply-42"), at(0))
        .unwrap();
    assert!(receive(&mut entity, &requester, at(0)).is_none());
    // Other traffic does not reach it; the responder's reply (group-id = reply-to-session-id) does.
    send(&mut entity, "noise", "other", at(1));
    send(&mut entity, "answer", "reply-42", at(2));
    let reply = receive(&mut entity, &requester, at(3)).unwrap();
    assert_eq!(text(&reply), "answer");
    settle(&mut entity, &requester, &reply, Outcome::Complete, at(3));
}

#[test]
fn deferred_messages_of_the_session_are_received_by_sequence_under_the_session_lock() {
    let mut entity = entity();
    let first = send(&mut entity, "m1", "s", at(0));
    let foreign = send(&mut entity, "x", "other", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    let delivery = receive(&mut entity, &lock, at(0)).unwrap();
    let defer = Outcome::Defer {
        properties: busbar_core::Properties::new(),
    };
    settle(&mut entity, &lock, &delivery, defer, at(1));
    assert!(receive(&mut entity, &lock, at(2)).is_none());
    assert_eq!(
        entity.receive_deferred(
            lock.owner,
            &lock.session,
            &[foreign],
            ReceiveMode::PeekLock,
            at(2)
        ),
        Err(SessionError::Core(busbar_core::CoreError::MessageNotFound(
            foreign
        )))
    );
    let deferred = entity
        .receive_deferred(
            lock.owner,
            &lock.session,
            &[first],
            ReceiveMode::PeekLock,
            at(2),
        )
        .unwrap();
    assert_eq!(deferred.len(), 1);
    assert_eq!(deferred[0].lock.unwrap().locked_until, lock.locked_until);
    settle(&mut entity, &lock, &deferred[0], Outcome::Complete, at(3));
    assert_eq!(entity.core().session_of(first), None);
    assert_eq!(
        entity.core().session_of(SequenceNumber(first.0 + 100)),
        None
    );
}

#[test]
fn a_session_handed_to_a_receiver_that_left_goes_to_the_next_waiter() {
    use busbar_sessions::AcceptSlot;
    let mut entity = entity();
    let slots = [AcceptSlot::new(), AcceptSlot::new()];
    for owner in [1, 2] {
        assert_eq!(
            entity.accept_next(ReceiverId(owner), at(60_000), at(0)),
            Ok(AcceptNext::Waiting)
        );
    }
    // Receiver 1's link detaches on its connection task; the entity task has not heard yet.
    assert_eq!(slots[0].cancel(), None);
    send(&mut entity, "m", "s", at(1));
    let Some(SessionEvent::Accepted(lock)) = entity.poll_event() else {
        panic!("the oldest waiter should be served");
    };
    assert_eq!(lock.owner, ReceiverId(1));
    // The slot refuses the hand-off, so the entity task releases at once.
    let returned = slots[0].fill(lock).unwrap_err();
    entity.close_receiver(returned.owner, at(2));
    let Some(SessionEvent::Accepted(lock)) = entity.poll_event() else {
        panic!("the session should pass to the next waiter");
    };
    assert_eq!(lock.owner, ReceiverId(2));
    slots[1].fill(lock.clone()).unwrap();
    assert_eq!(slots[1].take(), Some(lock.clone()));
    assert_eq!(text(&receive(&mut entity, &lock, at(3)).unwrap()), "m");
    entity.check_invariants().unwrap();
}

#[test]
fn the_holder_peeks_only_its_session() {
    let mut entity = entity();
    let first = send(&mut entity, "s1", "s", at(0));
    send(&mut entity, "t1", "t", at(0));
    let second = send(&mut entity, "s2", "s", at(0));
    let lock = entity.accept_named(ReceiverId(1), sid("s"), at(0)).unwrap();
    let peeked: Vec<_> = entity
        .peek(lock.owner, &lock.session, SequenceNumber(1), 10, at(1))
        .unwrap()
        .iter()
        .map(|delivery| delivery.sequence)
        .collect();
    assert_eq!(peeked, [first, second]);
    assert_eq!(
        entity.peek(ReceiverId(2), &sid("t"), SequenceNumber(1), 10, at(1)),
        Err(SessionError::LockLost(sid("t")))
    );
    // Peeking locks nothing: the first message is still the next one served.
    assert_eq!(receive(&mut entity, &lock, at(2)).unwrap().sequence, first);
}
