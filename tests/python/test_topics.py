"""Topics: a message sent to a topic reaches every subscription whose rules it matches."""

from azure.servicebus import ServiceBusMessage, ServiceBusReceiveMode

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
