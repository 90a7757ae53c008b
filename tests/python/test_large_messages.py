"""Premium's large messages: `MaxMessageSizeInKilobytes` set per queue and topic (admin API and
`Config.json`), read back, kept across a restart, and applied: the link advertises it, a 50 MB
message crosses whole, and one past the limit is refused with `MessageSizeExceededError`;
sender links advertise the batch limit (`com.microsoft:max-message-batch-size`, which the SDK
prefers), Premium's 1 MiB on a large-message entity and 256 KiB on a standard one.
"""

import os
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import MessageSizeExceededError

from support import receive_exactly, receive_one
from test_admin import admin_client

MB = 1024 * 1024


def payload(size):
    return os.urandom(size)


def received_body(message):
    return b"".join(message.body)


def test_a_50_mb_message_crosses_a_queue_created_with_premiums_largest_limit(own_broker):
    with admin_client(own_broker) as admin:
        admin.create_queue("q-premium", max_message_size_in_kilobytes=102400)
        assert admin.get_queue("q-premium").max_message_size_in_kilobytes == 102400
        assert admin.get_queue("q-large-configured").max_message_size_in_kilobytes == 1024
        assert admin.get_queue("q-send-receive").max_message_size_in_kilobytes == 256

    body = payload(50 * MB)
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        with client.get_queue_sender("q-premium") as sender:
            sender.send_messages(ServiceBusMessage(body, message_id="large"))
        with client.get_queue_receiver("q-premium", max_wait_time=5) as receiver:
            message = receive_one(receiver, guard_secs=60)
            assert message.message_id == "large"
            assert received_body(message) == body
            receiver.complete_message(message)
            assert receiver.receive_messages(max_wait_time=1) == []

    own_broker.restart()

    with admin_client(own_broker) as admin:
        queue = admin.get_queue("q-premium")
        assert queue.max_message_size_in_kilobytes == 102400
        queue.max_message_size_in_kilobytes = 2048
        admin.update_queue(queue)
        assert admin.get_queue("q-premium").max_message_size_in_kilobytes == 2048


def test_a_message_past_the_entitys_limit_is_refused_and_one_within_it_taken(broker, client):
    with client.get_queue_sender("q-large-configured") as sender:
        # The SDK sizes batches from the advertised limit (at least 1 MiB: Premium's batches).
        assert sender.create_message_batch().max_size_in_bytes == MB
        with pytest.raises(MessageSizeExceededError):
            sender.send_messages(ServiceBusMessage(payload(MB + 64 * 1024)))
        within = payload(MB - 64 * 1024)
        sender.send_messages(ServiceBusMessage(within))
    with client.get_queue_receiver("q-large-configured") as receiver:
        message = receive_one(receiver)
        assert received_body(message) == within
        receiver.complete_message(message)


def test_sender_links_advertise_the_batch_limit(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("q-batch-limit", max_message_size_in_kilobytes=4096)
    for queue, limit in [("q-batch-limit", MB), ("q-send-receive", 256 * 1024)]:
        with client.get_queue_sender(queue) as sender:
            assert sender.create_message_batch().max_size_in_bytes == limit
            # What the batch was sized from: the vendor property, not the fallback.
            advertised = sender._amqp_transport.get_remote_max_message_batch_size(sender._handler)
            assert advertised == limit, queue
            batch = sender.create_message_batch()
            while True:
                try:
                    batch.add_message(ServiceBusMessage(payload(32 * 1024)))
                except ValueError:
                    break
            assert batch.size_in_bytes > limit - 64 * 1024
            sender.send_messages(batch)
        with client.get_queue_receiver(queue, receive_mode="receiveanddelete") as receiver:
            assert len(receive_exactly(receiver, len(batch))) == len(batch)


def test_a_topics_limit_applies_to_its_sends_and_subscriptions(broker, client):
    with admin_client(broker) as admin:
        admin.create_topic("t-large", max_message_size_in_kilobytes=4096)
        admin.create_subscription("t-large", "all", lock_duration=timedelta(seconds=30))
        assert admin.get_topic("t-large").max_message_size_in_kilobytes == 4096
    sent, scheduled = payload(3 * MB), payload(3 * MB)
    with client.get_topic_sender("t-large") as sender:
        sender.send_messages(ServiceBusMessage(sent))
        with pytest.raises(MessageSizeExceededError):
            sender.send_messages(ServiceBusMessage(payload(5 * MB)))
        # Scheduling goes through the topic's $management node, which takes requests up to the
        # topic's limit (and 1 MiB more).
        sender.schedule_messages(ServiceBusMessage(scheduled), datetime.now(timezone.utc))
    with client.get_subscription_receiver("t-large", "all") as receiver:
        messages = receive_exactly(receiver, 2)
        assert sorted(received_body(message) for message in messages) == sorted([sent, scheduled])
        for message in messages:
            receiver.complete_message(message)


def test_the_admin_api_refuses_a_limit_beyond_premiums(broker):
    with admin_client(broker) as admin:
        with pytest.raises(HttpResponseError) as refused:
            admin.create_queue("q-too-large-limit", max_message_size_in_kilobytes=102401)
        assert refused.value.status_code == 400
        assert "MaxMessageSizeInKilobytes" in str(refused.value)
