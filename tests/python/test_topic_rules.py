"""Topic rules end to end: SQL and correlation filters select, rules added and removed at run
time change routing, a rule action edits the subscription's copy, subscriptions have a dead-letter queue (where a copy whose filter fails to
evaluate goes), forward to a queue (dead-lettered messages to ForwardDeadLetteredMessagesTo), and
keep their messages across a restart (topics and rules are declared in
conftest.TOPIC_RULE_TOPICS)."""

import functools

from azure.servicebus import (
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus._common import mgmt_handlers

from support import bodies, body_text, receive_exactly, receive_one


def send(client, topic, messages):
    with client.get_topic_sender(topic) as sender:
        sender.send_messages(messages)


def receive_all(client, topic, subscription, count, sub_queue=None):
    with client.get_subscription_receiver(
        topic,
        subscription,
        sub_queue=sub_queue,
        receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE,
    ) as receiver:
        received = receive_exactly(receiver, count)
        # Nothing more than expected is waiting.
        assert receiver.peek_messages(max_message_count=10) == []
        return received


def user_properties(message):
    return {
        (key.decode() if isinstance(key, bytes) else key): (
            value.decode() if isinstance(value, bytes) else value
        )
        for key, value in (message.application_properties or {}).items()
    }


def test_sql_and_correlation_filters_select_and_every_match_gets_a_copy(client):
    send(
        client,
        "t-select",
        [
            ServiceBusMessage("red-many", application_properties={"color": "red", "quantity": 10}),
            ServiceBusMessage("red-few", application_properties={"color": "red", "quantity": 2}),
            ServiceBusMessage("blue-order", subject="order", application_properties={"color": "blue", "priority": 1}),
            ServiceBusMessage("low-order", subject="order", application_properties={"priority": 2}),
        ],
    )
    assert sorted(bodies(receive_all(client, "t-select", "all", 4))) == sorted(
        ["red-many", "red-few", "blue-order", "low-order"]
    )
    assert bodies(receive_all(client, "t-select", "red-sql", 1)) == ["red-many"]
    assert bodies(receive_all(client, "t-select", "order-corr", 1)) == ["blue-order"]


def rule_request(receiver, operation, body):
    """A `$management` rule operation over the receiver's own management link. The Python SDK
    has no public AMQP rule API (its administration client speaks HTTP, which the emulator
    does not serve), so this uses the SDK's management request path, as its receive-deferred and
    peek operations do."""
    handler = functools.partial(mgmt_handlers.default, amqp_transport=receiver._amqp_transport)
    return receiver._mgmt_request_response_with_retry(operation, body, handler, timeout=10)


def test_rules_added_and_removed_at_run_time_change_routing(client):
    with client.get_subscription_receiver("t-runtime-rules", "dynamic") as receiver:
        rule_request(
            receiver,
            b"com.microsoft:add-rule",
            {"rule-name": "big", "rule-description": {"sql-filter": {"expression": "quantity > 10"}}},
        )
        rule_request(receiver, b"com.microsoft:remove-rule", {"rule-name": "$Default"})
    send(
        client,
        "t-runtime-rules",
        [
            ServiceBusMessage("small", application_properties={"quantity": 2}),
            ServiceBusMessage("large", application_properties={"quantity": 50}),
        ],
    )
    assert bodies(receive_all(client, "t-runtime-rules", "dynamic", 1)) == ["large"]


def test_a_rule_action_edits_the_subscription_copy(client):
    send(client, "t-action", [ServiceBusMessage("x", subject="plain", application_properties={"quantity": 21})])
    (message,) = receive_all(client, "t-action", "doubled", 1)
    properties = user_properties(message)
    assert properties["quantity"] == 42
    assert properties["RuleName"] == "double"
    assert message.subject == "doubled"


def test_a_subscription_has_a_dead_letter_queue(client):
    send(client, "t-dlq", [ServiceBusMessage("poison")])
    with client.get_subscription_receiver("t-dlq", "s") as receiver:
        message = receive_one(receiver)
        receiver.dead_letter_message(message, reason="Poison", error_description="cannot process")
    (dead,) = receive_all(client, "t-dlq", "s", 1, sub_queue=ServiceBusSubQueue.DEAD_LETTER)
    assert body_text(dead) == "poison"
    assert dead.dead_letter_reason == "Poison"


def test_a_copy_whose_filter_fails_to_evaluate_is_dead_lettered_with_its_reason(client):
    send(client, "t-filter-error", [ServiceBusMessage("unreadable", application_properties={"color": "red"})])
    (dead,) = receive_all(client, "t-filter-error", "typed", 1, sub_queue=ServiceBusSubQueue.DEAD_LETTER)
    assert body_text(dead) == "unreadable"
    assert dead.dead_letter_reason == "FilterException"
    assert dead.dead_letter_error_description == (
        "rule 'numeric': operator '>' cannot be applied to operands of type 'string' and 'long'"
    )
    assert user_properties(dead)["color"] == "red"
    # The subscription itself holds nothing; the other subscription got its copy as usual.
    with client.get_subscription_receiver("t-filter-error", "typed") as receiver:
        assert receiver.peek_messages(max_message_count=10) == []
    assert bodies(receive_all(client, "t-filter-error", "all", 1)) == ["unreadable"]
    # With DeadLetteringOnFilterEvaluationExceptions off, the copy is dropped.
    for sub_queue in (None, ServiceBusSubQueue.DEAD_LETTER):
        with client.get_subscription_receiver("t-filter-error", "typed-no-dlq", sub_queue=sub_queue) as receiver:
            assert receiver.peek_messages(max_message_count=10) == []


def test_dead_lettered_messages_are_forwarded_with_their_reason(client):
    with client.get_queue_sender("q-dlq-forward-source") as sender:
        sender.send_messages(ServiceBusMessage("abandoned"))
    with client.get_queue_receiver("q-dlq-forward-source") as receiver:
        receiver.abandon_message(receive_one(receiver))
    with client.get_queue_sender("q-dlq-forward-source") as sender:
        sender.send_messages(ServiceBusMessage("rejected", application_properties={"kept": 1}))
    with client.get_queue_receiver("q-dlq-forward-source") as receiver:
        receiver.dead_letter_message(receive_one(receiver), reason="Bad", error_description="why")
    with client.get_queue_receiver(
        "q-dlq-forward-target", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        forwarded = {body_text(message): message for message in receive_exactly(receiver, 2)}
    first, second = forwarded["abandoned"], forwarded["rejected"]
    assert first.dead_letter_reason == "MaxDeliveryCountExceeded"
    assert second.dead_letter_reason == "Bad"
    assert second.dead_letter_error_description == "why"
    assert user_properties(second)["kept"] == 1


def test_a_copy_whose_filter_fails_is_forwarded_when_the_subscription_forwards_dead_letters(client):
    send(client, "t-filter-error-forward", [ServiceBusMessage("unreadable", application_properties={"color": "red"})])
    with client.get_queue_receiver(
        "q-filter-error-target", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE
    ) as receiver:
        (forwarded,) = receive_exactly(receiver, 1)
    assert body_text(forwarded) == "unreadable"
    assert forwarded.dead_letter_reason == "FilterException"
    with client.get_subscription_receiver(
        "t-filter-error-forward", "typed", sub_queue=ServiceBusSubQueue.DEAD_LETTER
    ) as receiver:
        assert receiver.peek_messages(max_message_count=10) == []


def test_a_subscription_forwards_to_a_queue(client):
    send(client, "t-forward", [ServiceBusMessage("forwarded")])
    with client.get_queue_receiver("q-from-topic") as receiver:
        message = receive_one(receiver)
        assert body_text(message) == "forwarded"
        receiver.complete_message(message)
    with client.get_subscription_receiver("t-forward", "fwd") as receiver:
        assert receiver.peek_messages(max_message_count=10) == []


def test_subscription_messages_survive_a_restart(own_broker):
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        send(
            client,
            "t-restart",
            [
                ServiceBusMessage("kept", application_properties={"keep": True}),
                ServiceBusMessage("filtered", application_properties={"keep": False}),
            ],
        )
    own_broker.restart()
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        assert bodies(receive_all(client, "t-restart", "kept", 1)) == ["kept"]
