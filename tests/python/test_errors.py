"""Errors the SDK must raise as its documented exception classes."""

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import (
    MessageSizeExceededError,
    ServiceBusAuthenticationError,
    ServiceBusQuotaExceededError,
)

from support import bodies, connection_string, peek_all, receive_exactly, strict_client

# Service Bus (and the emulator) accept messages up to 256 KiB.
MAX_MESSAGE_SIZE = 256 * 1024


def test_oversize_message_is_rejected_and_the_sender_stays_usable(client):
    with client.get_queue_sender("q-oversize") as sender:
        with pytest.raises(MessageSizeExceededError):
            sender.send_messages(ServiceBusMessage("x" * (MAX_MESSAGE_SIZE + 40 * 1024)))
        sender.send_messages(ServiceBusMessage("small"))
    assert bodies(peek_all(client, "q-oversize")) == ["small"]


def test_a_message_far_over_the_limit_is_rejected_and_the_sender_stays_usable(client):
    # 1.5 MiB: past what the broker reads whole, so it counts the bytes and drops them, and still
    # answers with Service Bus's rejection instead of ending the link.
    with client.get_queue_sender("q-oversize-far") as sender:
        with pytest.raises(MessageSizeExceededError) as raised:
            sender.send_messages(ServiceBusMessage("x" * (1536 * 1024)))
        assert "exceeds the limit (262144 bytes) currently allowed on the link" in str(raised.value)
        sender.send_messages(ServiceBusMessage("small"))
    assert bodies(peek_all(client, "q-oversize-far")) == ["small"]


def test_batch_refuses_a_message_beyond_the_advertised_limit(client):
    with client.get_queue_sender("q-oversize") as sender:
        batch = sender.create_message_batch()
        # The SDK sizes batches by the max-message-size the broker advertises on the link.
        assert batch.max_size_in_bytes == MAX_MESSAGE_SIZE
        with pytest.raises(MessageSizeExceededError):
            batch.add_message(ServiceBusMessage("x" * (MAX_MESSAGE_SIZE + 1024)))


def test_a_full_queue_refuses_sends_until_messages_are_removed(client):
    # q-quota holds 1 MB (MaxSizeInMegabytes 1). As in Service Bus, a send is refused once the
    # stored size has reached the quota, so ten 100 KiB messages fit, the eleventh goes past it.
    body = "x" * (100 * 1024)
    with client.get_queue_sender("q-quota") as sender:
        for _ in range(11):
            sender.send_messages(ServiceBusMessage(body))
        with pytest.raises(ServiceBusQuotaExceededError) as raised:
            sender.send_messages(ServiceBusMessage(body))
        assert "maximum entity size has been reached or exceeded" in str(raised.value)
        with client.get_queue_receiver("q-quota") as receiver:
            for message in receive_exactly(receiver, 2):
                receiver.complete_message(message)
        # The same sender link goes on: the refusal was the message's, not the link's.
        sender.send_messages(ServiceBusMessage(body))
    assert len(peek_all(client, "q-quota")) == 10


# Service Bus answers the `$cbs` put-token for a missing entity with 404 and its not-found text;
# the Python SDK raises any put-token failure as ServiceBusAuthenticationError, carrying that text.
NOT_FOUND_TEXT = "could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions"


def test_sending_to_an_unknown_queue_reports_the_service_not_found_text(broker):
    with strict_client(broker.connection_string) as client:
        # The SDK opens the link on entering the block, so the error may surface there.
        with pytest.raises(ServiceBusAuthenticationError) as raised:
            with client.get_queue_sender("no-such-queue") as sender:
                sender.send_messages(ServiceBusMessage("lost"))
    assert "/no-such-queue' " + NOT_FOUND_TEXT in str(raised.value.inner_exception)


def test_receiving_from_an_unknown_queue_reports_the_service_not_found_text(broker):
    with strict_client(broker.connection_string) as client:
        with pytest.raises(ServiceBusAuthenticationError) as raised:
            with client.get_queue_receiver("no-such-queue") as receiver:
                receiver.receive_messages(max_message_count=1, max_wait_time=5)
    assert NOT_FOUND_TEXT in str(raised.value.inner_exception)


def test_wrong_sas_key_raises_an_authentication_error_and_nothing_is_sent(broker):
    # A refused CBS put-token surfaces as TokenAuthFailure inside the SDK, which it raises as
    # ServiceBusAuthenticationError (_pyamqp/cbs.py, _transport/_pyamqp_transport.py).
    wrong = connection_string(broker.port, key="NOT_THE_KEY")
    with strict_client(wrong) as client:
        with pytest.raises(ServiceBusAuthenticationError) as raised:
            with client.get_queue_sender("q-auth") as sender:
                sender.send_messages(ServiceBusMessage("forged"))
    # The refusal came from the CBS put-token, not from a broken connection.
    assert "CBS Token authentication failed" in str(raised.value.inner_exception)
    with strict_client(broker.connection_string) as client:
        assert peek_all(client, "q-auth") == []


def test_wrong_sas_key_cannot_receive(broker):
    with strict_client(broker.connection_string) as client:
        with client.get_queue_sender("q-auth-receive") as sender:
            sender.send_messages(ServiceBusMessage("secret"))
    wrong = connection_string(broker.port, key="NOT_THE_KEY")
    with strict_client(wrong) as client:
        with pytest.raises(ServiceBusAuthenticationError):
            with client.get_queue_receiver("q-auth-receive") as receiver:
                receiver.receive_messages(max_message_count=1, max_wait_time=5)
    with strict_client(broker.connection_string) as client:
        assert bodies(peek_all(client, "q-auth-receive")) == ["secret"]
