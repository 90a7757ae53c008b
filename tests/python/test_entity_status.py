"""Entity status (Active, Disabled, SendDisabled, ReceiveDisabled) set through the official
`ServiceBusAdministrationClient` and `Config.json`, enforced as Service Bus enforces it: the
`$cbs` put-token still succeeds, the refused link raises the SDK's
`MessagingEntityDisabledError` (condition `com.microsoft:entity-disabled`), links already open
are refused at their next send or receive, and the messages stay untouched until the entity is
active again. A disabled subscription still takes its topic's copies ("Suspend and reactivate
messaging entities"); a subscription of a disabled topic hands out nothing.

Clients run with `retry_total=0`: the SDK retries this error, which would only slow the tests.
"""

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import MessagingEntityDisabledError
from azure.servicebus.management import EntityStatus

from support import api, bodies, receive_exactly
from test_admin import admin_client
from test_http_data_plane import rest

DISABLED_TEXT = "is currently disabled. For more information please see https://aka.ms/ServiceBusExceptions"
SEND_DISABLED_TEXT = "is currently disabled for Send operations."


@pytest.fixture
def client(broker):
    with ServiceBusClient.from_connection_string(broker.connection_string, retry_total=0) as sb:
        yield sb


def set_status(broker, status, get, update):
    """Sets the status of the entity `get(admin)` reads, through `update(admin, properties)`."""
    with admin_client(broker) as admin:
        properties = get(admin)
        properties.status = status
        update(admin, properties)
        assert get(admin).status == status


def set_queue_status(broker, name, status):
    set_status(broker, status, lambda admin: admin.get_queue(name), lambda admin, q: admin.update_queue(q))


def set_topic_status(broker, name, status):
    set_status(broker, status, lambda admin: admin.get_topic(name), lambda admin, t: admin.update_topic(t))


def set_subscription_status(broker, topic, name, status):
    set_status(
        broker,
        status,
        lambda admin: admin.get_subscription(topic, name),
        lambda admin, subscription: admin.update_subscription(topic, subscription),
    )


def send(client, queue, *texts):
    with client.get_queue_sender(queue) as sender:
        sender.send_messages([ServiceBusMessage(text) for text in texts])


def refused_send(open_sender):
    """The error a new sender (`open_sender()`) gets: its attach is refused."""
    with pytest.raises(MessagingEntityDisabledError) as raised:
        with open_sender() as sender:
            sender.send_messages(ServiceBusMessage("refused"))
    return str(raised.value)


def received(open_receiver, count=1):
    """The bodies of the `count` messages a new receiver (`open_receiver()`) gets, completed."""
    with open_receiver() as receiver:
        messages = receive_exactly(receiver, count)
        for message in messages:
            receiver.complete_message(message)
    return sorted(bodies(messages))


def refused_receive(open_receiver):
    """The error a new receiver (`open_receiver()`) gets: its attach is refused."""
    with pytest.raises(MessagingEntityDisabledError) as raised:
        with open_receiver() as receiver:
            receiver.receive_messages(max_message_count=1, max_wait_time=5)
    return str(raised.value)


def test_a_disabled_queue_refuses_sends_and_receives_and_keeps_its_messages(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("status-disabled")
    send(client, "status-disabled", "a", "b")
    set_queue_status(broker, "status-disabled", EntityStatus.DISABLED)

    assert DISABLED_TEXT in refused_send(lambda: client.get_queue_sender("status-disabled"))
    text = refused_receive(lambda: client.get_queue_receiver("status-disabled"))
    assert "sb://sbemulatorns/status-disabled" in text
    with admin_client(broker) as admin:
        assert admin.get_queue_runtime_properties("status-disabled").active_message_count == 2

    set_queue_status(broker, "status-disabled", EntityStatus.ACTIVE)
    assert received(lambda: client.get_queue_receiver("status-disabled"), 2) == ["a", "b"]


def test_a_send_disabled_queue_refuses_sends_but_hands_out_its_messages(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("status-send-disabled")
    send(client, "status-send-disabled", "before")
    set_queue_status(broker, "status-send-disabled", EntityStatus.SEND_DISABLED)

    text = refused_send(lambda: client.get_queue_sender("status-send-disabled"))
    assert f"'sbemulatorns:Queue:status-send-disabled' {SEND_DISABLED_TEXT}" in text
    assert received(lambda: client.get_queue_receiver("status-send-disabled")) == ["before"]


def test_a_receive_disabled_queue_takes_sends_and_hands_them_out_once_active(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("status-receive-disabled")
    set_queue_status(broker, "status-receive-disabled", EntityStatus.RECEIVE_DISABLED)

    send(client, "status-receive-disabled", "kept")
    assert DISABLED_TEXT in refused_receive(
        lambda: client.get_queue_receiver("status-receive-disabled")
    )

    set_queue_status(broker, "status-receive-disabled", EntityStatus.ACTIVE)
    assert received(lambda: client.get_queue_receiver("status-receive-disabled")) == ["kept"]


def test_links_already_open_are_refused_at_once(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("status-open-links")
    with client.get_queue_sender("status-open-links") as sender, client.get_queue_receiver(
        "status-open-links"
    ) as receiver:
        sender.send_messages(ServiceBusMessage("first"))
        (first,) = receive_exactly(receiver, 1)
        receiver.complete_message(first)
        sender.send_messages(ServiceBusMessage("second"))

        set_queue_status(broker, "status-open-links", EntityStatus.DISABLED)

        # The open sender's next send is refused on its disposition.
        with pytest.raises(MessagingEntityDisabledError):
            sender.send_messages(ServiceBusMessage("refused"))
        # The open receiver was detached with the error.
        with pytest.raises(MessagingEntityDisabledError):
            receiver.receive_messages(max_message_count=1, max_wait_time=5)

    set_queue_status(broker, "status-open-links", EntityStatus.ACTIVE)
    assert received(lambda: client.get_queue_receiver("status-open-links")) == ["second"]


def test_a_disabled_topic_refuses_sends_and_its_subscriptions_hand_out_nothing(broker, client):
    with admin_client(broker) as admin:
        admin.create_topic("status-topic")
        admin.create_subscription("status-topic", "all")
    with client.get_topic_sender("status-topic") as sender:
        sender.send_messages(ServiceBusMessage("before"))
    set_topic_status(broker, "status-topic", EntityStatus.DISABLED)

    assert DISABLED_TEXT in refused_send(lambda: client.get_topic_sender("status-topic"))
    refused_receive(lambda: client.get_subscription_receiver("status-topic", "all"))

    # SendDisabled: still no sends, but its subscriptions hand out what they hold.
    set_topic_status(broker, "status-topic", EntityStatus.SEND_DISABLED)
    text = refused_send(lambda: client.get_topic_sender("status-topic"))
    assert f"'sbemulatorns:Topic:status-topic' {SEND_DISABLED_TEXT}" in text
    assert received(lambda: client.get_subscription_receiver("status-topic", "all")) == ["before"]


@pytest.mark.parametrize("status", [EntityStatus.DISABLED, EntityStatus.RECEIVE_DISABLED])
def test_a_suspended_subscription_keeps_taking_copies_but_hands_out_none(broker, client, status):
    topic = f"status-sub-{status.value.lower()}"
    with admin_client(broker) as admin:
        admin.create_topic(topic)
        admin.create_subscription(topic, "suspended")
        admin.create_subscription(topic, "other")
    set_subscription_status(broker, topic, "suspended", status)

    with client.get_topic_sender(topic) as sender:
        sender.send_messages(ServiceBusMessage("copied"))
    assert received(lambda: client.get_subscription_receiver(topic, "other")) == ["copied"]
    text = refused_receive(lambda: client.get_subscription_receiver(topic, "suspended"))
    assert f"sb://sbemulatorns/{topic}/Subscriptions/suspended" in text
    with admin_client(broker) as admin:
        runtime = admin.get_subscription_runtime_properties(topic, "suspended")
        assert runtime.active_message_count == 1

    set_subscription_status(broker, topic, "suspended", EntityStatus.ACTIVE)
    assert received(lambda: client.get_subscription_receiver(topic, "suspended")) == ["copied"]


def test_statuses_a_kind_cannot_take_are_refused(broker):
    with admin_client(broker) as admin:
        admin.create_topic("status-kinds")
        admin.create_subscription("status-kinds", "s")
        topic = admin.get_topic("status-kinds")
        topic.status = EntityStatus.RECEIVE_DISABLED
        with pytest.raises(Exception, match="Status"):
            admin.update_topic(topic)
        subscription = admin.get_subscription("status-kinds", "s")
        subscription.status = EntityStatus.SEND_DISABLED
        with pytest.raises(Exception, match="Status"):
            admin.update_subscription("status-kinds", subscription)
        assert admin.get_topic("status-kinds").status == EntityStatus.ACTIVE


def test_the_http_data_plane_and_the_explorer_refuse_like_amqp(broker):
    with admin_client(broker) as admin:
        admin.create_queue("status-http")
    set_queue_status(broker, "status-http", EntityStatus.DISABLED)
    with pytest.raises(Exception) as raised:
        rest(broker, "POST", "/status-http/messages", body=b"refused")
    assert raised.value.code == 403
    assert DISABLED_TEXT in raised.value.read().decode()
    with pytest.raises(Exception) as raised:
        rest(broker, "DELETE", "/status-http/messages/head?timeout=1")
    assert raised.value.code == 403
    status, _ = api(broker, "POST", "/$busbar/api/messages/status-http", {"body": "refused"})
    assert status == 400


def test_config_json_sets_the_status(broker, client):
    # q-status-configured is "Status": "Disabled" in the test Config.json (conftest.py).
    assert DISABLED_TEXT in refused_send(lambda: client.get_queue_sender("q-status-configured"))
    with admin_client(broker) as admin:
        assert admin.get_queue("q-status-configured").status == EntityStatus.DISABLED


def test_a_status_set_through_the_api_survives_a_restart(own_broker):
    with admin_client(own_broker) as admin:
        admin.create_queue("status-kept")
    set_queue_status(own_broker, "status-kept", EntityStatus.SEND_DISABLED)
    own_broker.restart()
    with admin_client(own_broker) as admin:
        assert admin.get_queue("status-kept").status == EntityStatus.SEND_DISABLED
    with ServiceBusClient.from_connection_string(
        own_broker.connection_string, retry_total=0
    ) as client:
        assert SEND_DISABLED_TEXT in refused_send(lambda: client.get_queue_sender("status-kept"))
