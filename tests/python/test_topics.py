"""Topics: a message sent to a topic reaches every subscription whose rules it matches."""

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.exceptions import ServiceBusQuotaExceededError

from support import bodies, receive_exactly


def receive_from(client, subscription, count):
    with client.get_subscription_receiver(
        "t-fanout", subscription, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        return receive_exactly(receiver, count)


def test_topic_fans_out_to_subscriptions_by_their_rules(client):
    with client.get_topic_sender("t-fanout") as sender:
        sender.send_messages(ServiceBusMessage("plain", content_type="text/plain"))
        sender.send_messages(ServiceBusMessage('{"json": true}', content_type="application/json"))
    # "all" has no rules: it gets both; "json" filters on the content type.
    assert bodies(receive_from(client, "all", 2)) == ["plain", '{"json": true}']
    assert bodies(receive_from(client, "json", 1)) == ['{"json": true}']
    with client.get_subscription_receiver("t-fanout", "json") as receiver:
        assert receiver.peek_messages(max_message_count=10, sequence_number=1) == []


def test_a_topic_quota_bounds_each_subscription_and_a_refused_send_stores_no_copy(client):
    # t-quota has MaxSizeInMegabytes 1, applied to each subscription: ten 100 KiB messages fit
    # in "all", the eleventh goes past the quota (as in Service Bus, the last one accepted may).
    with client.get_topic_sender("t-quota") as sender:
        for _ in range(11):
            sender.send_messages(ServiceBusMessage("x" * (100 * 1024)))
        # "rare" has room, but "all" is full: the send is refused as a whole.
        with pytest.raises(ServiceBusQuotaExceededError):
            sender.send_messages(
                ServiceBusMessage("rare one", application_properties={"kind": "rare"})
            )
    with client.get_subscription_receiver("t-quota", "rare") as receiver:
        assert receiver.peek_messages(max_message_count=10, sequence_number=1) == []
    with client.get_subscription_receiver("t-quota", "all") as receiver:
        assert len(receiver.peek_messages(max_message_count=20, sequence_number=1)) == 11
