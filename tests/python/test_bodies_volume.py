"""Message bodies of every size and kind arrive intact, and many messages arrive in order."""

from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.exceptions import MessageSizeExceededError

from support import bodies, peek_all, receive_exactly, receive_one

# Larger than the 64 KiB frames some clients negotiate, smaller than the 256 KiB limit.
LARGE_BODY_SIZE = 200 * 1024
VOLUME = 300
BATCH_SIZE = 50


def test_large_message_round_trips_intact(client):
    body = bytes(index % 251 for index in range(LARGE_BODY_SIZE))
    with client.get_queue_sender("q-large") as sender:
        sender.send_messages(ServiceBusMessage(body))
    with client.get_queue_receiver("q-large") as receiver:
        message = receive_one(receiver)
        assert b"".join(message.body) == body
        receiver.complete_message(message)


def test_binary_and_unicode_bodies_round_trip_intact(client):
    binary = bytes(range(256))
    text = "zażółć gęślą jaźń — 東京 — 🚌"
    with client.get_queue_sender("q-binary") as sender:
        sender.send_messages([ServiceBusMessage(binary), ServiceBusMessage(text)])
    with client.get_queue_receiver(
        "q-binary", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        first, second = receive_exactly(receiver, 2)
        assert b"".join(first.body) == binary
        assert b"".join(second.body).decode() == text


def test_many_messages_arrive_once_each_in_order(client):
    texts = [f"m-{index:04}" for index in range(VOLUME)]
    with client.get_queue_sender("q-volume") as sender:
        for start in range(0, VOLUME, BATCH_SIZE):
            batch = sender.create_message_batch()
            for text in texts[start : start + BATCH_SIZE]:
                batch.add_message(ServiceBusMessage(text))
            sender.send_messages(batch)
    with client.get_queue_receiver(
        "q-volume", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        received = receive_exactly(receiver, VOLUME)
    assert bodies(received) == texts
    sequence_numbers = [message.sequence_number for message in received]
    assert sequence_numbers == sorted(set(sequence_numbers))
    assert peek_all(client, "q-volume") == []


def test_a_batch_filled_to_the_advertised_limit_is_accepted_whole(client):
    with client.get_queue_sender("q-full-batch") as sender:
        batch = sender.create_message_batch()
        count = 0
        while True:
            try:
                batch.add_message(ServiceBusMessage(f"{count:05}" + "x" * 1019))
            except MessageSizeExceededError:
                break
            count += 1
        # The SDK stops just short of the limit the broker advertised; the broker takes it all.
        assert batch.size_in_bytes > batch.max_size_in_bytes - 2048
        sender.send_messages(batch)
    with client.get_queue_receiver(
        "q-full-batch", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        received = receive_exactly(receiver, count)
    assert [body[:5] for body in bodies(received)] == [f"{index:05}" for index in range(count)]
