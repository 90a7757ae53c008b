"""Duplicate detection by message id, and message expiry (dropped or dead-lettered)."""

import datetime

from azure.servicebus import ServiceBusMessage, ServiceBusSubQueue

from support import bodies, body_text, peek_all, receive_one, wait_until

DLQ = ServiceBusSubQueue.DEAD_LETTER


def send_with_ids(client, queue_name, pairs):
    with client.get_queue_sender(queue_name) as sender:
        for message_id, text in pairs:
            sender.send_messages(ServiceBusMessage(text, message_id=message_id))


def test_duplicate_message_ids_are_dropped_within_the_window(client):
    # Every send is acknowledged, duplicates included; only the first copy is kept.
    send_with_ids(client, "q-dedup", [("order-1", "first"), ("order-1", "again"), ("order-2", "other")])
    with client.get_queue_sender("q-dedup") as sender:
        sender.send_messages(
            [ServiceBusMessage("in a batch", message_id="order-2"), ServiceBusMessage("new", message_id="order-3")]
        )
    kept = peek_all(client, "q-dedup")
    assert [(message.message_id, body_text(message)) for message in kept] == [
        ("order-1", "first"),
        ("order-2", "other"),
        ("order-3", "new"),
    ]


def test_without_duplicate_detection_every_copy_is_kept(client):
    send_with_ids(client, "q-no-dedup", [("same", "one"), ("same", "two")])
    assert bodies(peek_all(client, "q-no-dedup")) == ["one", "two"]


def test_expired_message_is_dead_lettered_when_the_queue_asks_for_it(client):
    # DefaultMessageTimeToLive PT2S, DeadLetteringOnMessageExpiration true.
    with client.get_queue_sender("q-ttl-dead-letter") as sender:
        sender.send_messages(ServiceBusMessage("perishable"))
    with client.get_queue_receiver("q-ttl-dead-letter", sub_queue=DLQ) as dlq_receiver:
        dead = receive_one(dlq_receiver)
        assert body_text(dead) == "perishable"
        assert dead.dead_letter_reason == "TTLExpiredException"
        dlq_receiver.complete_message(dead)
    assert peek_all(client, "q-ttl-dead-letter") == []


def test_a_message_time_to_live_shorter_than_the_queue_default_applies(client):
    # The queue keeps messages an hour by default; this one asks for two seconds.
    with client.get_queue_sender("q-message-ttl") as sender:
        sender.send_messages(
            ServiceBusMessage("brief", time_to_live=datetime.timedelta(seconds=2))
        )
    with client.get_queue_receiver("q-message-ttl", sub_queue=DLQ) as dlq_receiver:
        dead = receive_one(dlq_receiver)
        assert body_text(dead) == "brief"
        assert dead.dead_letter_reason == "TTLExpiredException"
        dlq_receiver.complete_message(dead)
    assert peek_all(client, "q-message-ttl") == []


def test_expired_message_is_dropped_and_never_delivered(client):
    # DefaultMessageTimeToLive PT2S, no dead-lettering on expiry.
    with client.get_queue_sender("q-ttl-drop") as sender:
        sender.send_messages(ServiceBusMessage("short-lived"))
    (peeked,) = peek_all(client, "q-ttl-drop")
    # The effective time to live (the entity's default here) is reported on the message.
    assert peeked.time_to_live == datetime.timedelta(seconds=2)

    wait_until(lambda: peek_all(client, "q-ttl-drop") == [], "removal of the expired message")
    with client.get_queue_receiver("q-ttl-drop") as receiver:
        assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
    assert peek_all(client, "q-ttl-drop", sub_queue=DLQ) == []
