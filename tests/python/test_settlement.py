"""Peek-lock settlement: complete, abandon, dead-letter (and reading the DLQ), defer, and peek."""

import datetime

from azure.servicebus import ServiceBusMessageState, ServiceBusReceiveMode, ServiceBusSubQueue

from support import bodies, body_text, peek_all, receive_exactly, receive_one, send_texts

DLQ = ServiceBusSubQueue.DEAD_LETTER


def test_complete_removes_only_the_completed_message(client):
    send_texts(client, "q-complete", ["keep", "done"])
    with client.get_queue_receiver("q-complete") as receiver:
        keep, done = receive_exactly(receiver, 2)
        assert bodies([keep, done]) == ["keep", "done"]
        receiver.complete_message(done)
        receiver.abandon_message(keep)
    remaining = peek_all(client, "q-complete")
    assert bodies(remaining) == ["keep"]
    assert remaining[0].sequence_number == keep.sequence_number


def test_abandon_redelivers_with_an_incremented_delivery_count(client):
    send_texts(client, "q-abandon", ["again"])
    with client.get_queue_receiver("q-abandon") as receiver:
        first = receive_one(receiver)
        assert first.delivery_count == 0
        receiver.abandon_message(first)
        second = receive_one(receiver)
        assert body_text(second) == "again"
        assert second.sequence_number == first.sequence_number
        assert second.delivery_count == 1
        assert second.lock_token != first.lock_token
        receiver.abandon_message(second)
        third = receive_one(receiver)
        assert third.delivery_count == 2
        receiver.complete_message(third)
    assert peek_all(client, "q-abandon") == []


def test_dead_letter_moves_the_message_to_the_readable_dead_letter_queue(client):
    send_texts(client, "q-dead-letter", ["poison", "fine"])
    with client.get_queue_receiver("q-dead-letter") as receiver:
        poison, fine = receive_exactly(receiver, 2)
        receiver.dead_letter_message(
            poison, reason="ValidationFailed", error_description="field x is missing"
        )
        receiver.complete_message(fine)
    assert peek_all(client, "q-dead-letter") == []

    with client.get_queue_receiver("q-dead-letter", sub_queue=DLQ) as dlq_receiver:
        dead = receive_one(dlq_receiver)
        assert body_text(dead) == "poison"
        assert dead.message_id == poison.message_id
        assert dead.dead_letter_reason == "ValidationFailed"
        assert dead.dead_letter_error_description == "field x is missing"
        dlq_receiver.complete_message(dead)
    assert peek_all(client, "q-dead-letter", sub_queue=DLQ) == []


def test_dead_letter_without_a_reason(client):
    # The SDK then sends null reason and description in the rejected outcome's info map.
    send_texts(client, "q-dead-letter-bare", ["no reason given"])
    with client.get_queue_receiver("q-dead-letter-bare") as receiver:
        receiver.dead_letter_message(receive_one(receiver))
    assert peek_all(client, "q-dead-letter-bare") == []
    (dead,) = peek_all(client, "q-dead-letter-bare", sub_queue=DLQ)
    assert body_text(dead) == "no reason given"
    assert not dead.dead_letter_reason
    assert not dead.dead_letter_error_description


def test_defer_then_receive_by_sequence_number_and_complete(client):
    send_texts(client, "q-defer", ["later", "now"])
    with client.get_queue_receiver("q-defer") as receiver:
        later, now = receive_exactly(receiver, 2)
        receiver.defer_message(later)
        receiver.complete_message(now)
        # A deferred message is not delivered again by an ordinary receive ...
        assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
        # ... but it is still in the queue, visible to peek as deferred.
        (peeked,) = receiver.peek_messages(max_message_count=10, sequence_number=1)
        assert peeked.sequence_number == later.sequence_number
        assert peeked.state == ServiceBusMessageState.DEFERRED

        (deferred,) = receiver.receive_deferred_messages([later.sequence_number])
        assert body_text(deferred) == "later"
        assert deferred.sequence_number == later.sequence_number
        assert deferred.state == ServiceBusMessageState.DEFERRED
        assert deferred.lock_token is not None
        # The lock taken by receive-by-sequence-number can be renewed like any other.
        first_lock_end = deferred.locked_until_utc
        now = datetime.datetime.now(datetime.timezone.utc)
        assert first_lock_end > now + datetime.timedelta(seconds=30)
        renewed_until = receiver.renew_message_lock(deferred)
        assert renewed_until >= first_lock_end
        assert renewed_until > now + datetime.timedelta(seconds=50)
        receiver.complete_message(deferred)
    assert peek_all(client, "q-defer") == []


def test_deferred_message_can_be_dead_lettered_through_management(client):
    send_texts(client, "q-deferred-dead-letter", ["deferred-poison"])
    with client.get_queue_receiver("q-deferred-dead-letter") as receiver:
        message = receive_one(receiver)
        receiver.defer_message(message)
        (deferred,) = receiver.receive_deferred_messages([message.sequence_number])
        receiver.dead_letter_message(deferred, reason="GaveUp", error_description="after deferral")
    assert peek_all(client, "q-deferred-dead-letter") == []
    (dead,) = peek_all(client, "q-deferred-dead-letter", sub_queue=DLQ)
    assert body_text(dead) == "deferred-poison"
    assert dead.dead_letter_reason == "GaveUp"
    assert dead.dead_letter_error_description == "after deferral"


def test_peek_neither_locks_nor_counts_and_pages_by_sequence_number(client):
    send_texts(client, "q-peek", ["p0", "p1", "p2"])
    with client.get_queue_receiver("q-peek") as receiver:
        first_page = receiver.peek_messages(max_message_count=2)
        assert bodies(first_page) == ["p0", "p1"]
        # The receiver continues after the last sequence number it saw.
        second_page = receiver.peek_messages(max_message_count=2)
        assert bodies(second_page) == ["p2"]
        peeked = first_page + second_page
        sequence_numbers = [message.sequence_number for message in peeked]
        assert sequence_numbers == sorted(sequence_numbers)
        assert all(message.delivery_count == 0 for message in peeked)
        assert all(message.state == ServiceBusMessageState.ACTIVE for message in peeked)
        # Peeking from an explicit sequence number starts there.
        assert bodies(
            receiver.peek_messages(max_message_count=5, sequence_number=sequence_numbers[1])
        ) == ["p1", "p2"]

        # Peeked messages were not locked: all three can be received at once, first delivery.
        received = receive_exactly(receiver, 3)
        assert bodies(received) == ["p0", "p1", "p2"]
        assert [message.delivery_count for message in received] == [0, 0, 0]
        for message in received:
            receiver.complete_message(message)
    assert peek_all(client, "q-peek") == []


def test_peek_on_an_empty_queue_returns_nothing(client):
    with client.get_queue_receiver("q-peek-dlq", sub_queue=DLQ) as receiver:
        assert receiver.peek_messages(max_message_count=10) == []
    with client.get_queue_receiver(
        "q-peek-dlq", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        assert receiver.peek_messages(max_message_count=10) == []
