"""Sending and receiving: one message with its properties, batches, receive-and-delete."""

import datetime

from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode

from support import bodies, body_text, peek_all, receive_exactly, receive_one, send_texts


def test_send_then_peek_lock_receive_and_complete(client):
    send_texts(client, "q-send-receive", ["hello"])
    with client.get_queue_receiver("q-send-receive") as receiver:
        message = receive_one(receiver)
        assert body_text(message) == "hello"
        assert message.sequence_number >= 1
        assert message.delivery_count == 0
        assert message.message_id, "the broker assigns a message id when the sender gave none"
        assert message.lock_token is not None
        now = datetime.datetime.now(datetime.timezone.utc)
        assert abs(message.enqueued_time_utc - now) < datetime.timedelta(seconds=30)
        # The queue's LockDuration is the default, one minute.
        assert message.locked_until_utc > now + datetime.timedelta(seconds=30)
        receiver.complete_message(message)
    assert peek_all(client, "q-send-receive") == []


def test_message_properties_survive_the_round_trip(client):
    sent = ServiceBusMessage(
        "with properties",
        message_id="id-42",
        correlation_id="corr-7",
        subject="greeting",
        content_type="text/plain",
        reply_to="q-replies",
        to="someone",
        application_properties={"colour": "blue", "count": 3, "ratio": 0.5, "flag": True},
    )
    with client.get_queue_sender("q-properties") as sender:
        sender.send_messages(sent)
    with client.get_queue_receiver("q-properties") as receiver:
        message = receive_one(receiver)
        assert body_text(message) == "with properties"
        assert message.message_id == "id-42"
        assert message.correlation_id == "corr-7"
        assert message.subject == "greeting"
        assert message.content_type == "text/plain"
        assert message.reply_to == "q-replies"
        assert message.to == "someone"
        # Received keys and string values come back as bytes (documented SDK behaviour).
        assert message.application_properties == {
            b"colour": b"blue",
            b"count": 3,
            b"ratio": 0.5,
            b"flag": True,
        }
        receiver.complete_message(message)


def test_batch_and_list_sends_keep_order_with_consecutive_sequence_numbers(client):
    with client.get_queue_sender("q-batch") as sender:
        batch = sender.create_message_batch()
        for index in range(3):
            batch.add_message(ServiceBusMessage(f"batch-{index}"))
        sender.send_messages(batch)
        sender.send_messages([ServiceBusMessage("list-0"), ServiceBusMessage("list-1")])
    with client.get_queue_receiver("q-batch") as receiver:
        messages = receive_exactly(receiver, 5)
        assert bodies(messages) == ["batch-0", "batch-1", "batch-2", "list-0", "list-1"]
        sequence_numbers = [message.sequence_number for message in messages]
        first = sequence_numbers[0]
        assert sequence_numbers == list(range(first, first + 5))
        assert len({message.message_id for message in messages}) == 5
        for message in messages:
            receiver.complete_message(message)
    assert peek_all(client, "q-batch") == []


def test_receive_and_delete_removes_messages_without_settlement(client):
    send_texts(client, "q-receive-and-delete", ["rad-0", "rad-1"])
    with client.get_queue_receiver(
        "q-receive-and-delete", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        messages = receive_exactly(receiver, 2)
        assert bodies(messages) == ["rad-0", "rad-1"]
    assert peek_all(client, "q-receive-and-delete") == []
