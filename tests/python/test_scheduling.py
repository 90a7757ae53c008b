"""Scheduled messages: enqueued at their time, visible to peek as scheduled, cancellable."""

import datetime

from azure.servicebus import ServiceBusMessage, ServiceBusMessageState

from support import body_text, peek_all, receive_one

CLOCK_SLACK = datetime.timedelta(seconds=1)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def test_scheduled_message_appears_at_its_time(client):
    enqueue_at = utc_now() + datetime.timedelta(seconds=3)
    with client.get_queue_sender("q-schedule") as sender:
        (sequence_number,) = sender.schedule_messages(ServiceBusMessage("on time"), enqueue_at)
    assert sequence_number >= 1

    (peeked,) = peek_all(client, "q-schedule")
    assert peeked.sequence_number == sequence_number
    assert peeked.state == ServiceBusMessageState.SCHEDULED
    assert abs(peeked.scheduled_enqueue_time_utc - enqueue_at) < CLOCK_SLACK

    with client.get_queue_receiver("q-schedule") as receiver:
        message = receive_one(receiver)
        assert utc_now() >= enqueue_at - CLOCK_SLACK, "delivered before its scheduled time"
        assert body_text(message) == "on time"
        assert message.sequence_number == sequence_number
        assert message.state == ServiceBusMessageState.ACTIVE
        receiver.complete_message(message)
    assert peek_all(client, "q-schedule") == []


def test_cancelled_scheduled_message_never_arrives(client):
    now = utc_now()
    with client.get_queue_sender("q-cancel-schedule") as sender:
        cancelled, kept = sender.schedule_messages(
            [ServiceBusMessage("cancelled"), ServiceBusMessage("kept")],
            now + datetime.timedelta(seconds=2),
        )
        assert kept > cancelled
        sender.cancel_scheduled_messages(cancelled)
    assert [message.sequence_number for message in peek_all(client, "q-cancel-schedule")] == [kept]

    with client.get_queue_receiver("q-cancel-schedule") as receiver:
        # Both were due at the same instant: once "kept" arrives, "cancelled" would have too.
        message = receive_one(receiver)
        assert body_text(message) == "kept"
        receiver.complete_message(message)
        assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
    assert peek_all(client, "q-cancel-schedule") == []


def test_message_sent_with_a_scheduled_enqueue_time_is_held_until_then(client):
    enqueue_at = utc_now() + datetime.timedelta(seconds=2)
    with client.get_queue_sender("q-schedule-on-send") as sender:
        sender.send_messages(ServiceBusMessage("held", scheduled_enqueue_time_utc=enqueue_at))
    (peeked,) = peek_all(client, "q-schedule-on-send")
    assert peeked.state == ServiceBusMessageState.SCHEDULED

    with client.get_queue_receiver("q-schedule-on-send") as receiver:
        message = receive_one(receiver)
        assert utc_now() >= enqueue_at - CLOCK_SLACK, "delivered before its scheduled time"
        assert body_text(message) == "held"
        receiver.complete_message(message)
