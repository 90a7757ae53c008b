"""The administration API through the official Python `ServiceBusAdministrationClient` (7.15):
queues created, read, listed, changed and deleted while the broker runs, their runtime counts,
SQL rules with typed parameters, and what a restart keeps.

The 7.15 admin client always speaks https, to the connection string's port. The broker serves
https and plain HTTP on that one port: one test uses the client unchanged, trusting the broker's
development CA; the others use the workaround of Microsoft's own emulator sample (the base URL
set to http after construction), which plain HTTP serves. The SAS token it signs is checked
against the namespace key.
"""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError, ServiceRequestError
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusAuthenticationError
from azure.servicebus.management import ServiceBusAdministrationClient

from support import connection_string, peek_all, receive_exactly


def admin_client(broker):
    """The SDK's admin client on the broker's admin port, over plain HTTP."""
    client = ServiceBusAdministrationClient.from_connection_string(
        connection_string(broker.admin_port)
    )
    client._impl._client._base_url = f"http://localhost:{broker.admin_port}"
    return client


def test_a_queue_is_created_with_its_properties_and_used_over_amqp_at_once(broker, client):
    with admin_client(broker) as admin:
        created = admin.create_queue(
            "made-by-api",
            lock_duration=timedelta(seconds=30),
            max_delivery_count=7,
            default_message_time_to_live=timedelta(days=1),
            dead_lettering_on_message_expiration=True,
            requires_duplicate_detection=True,
            duplicate_detection_history_time_window=timedelta(minutes=2),
            max_size_in_megabytes=2048,
            user_metadata="made by the admin test",
        )
        assert created.name == "made-by-api"
        read = admin.get_queue("made-by-api")
        assert read.lock_duration == timedelta(seconds=30)
        assert read.max_delivery_count == 7
        assert read.default_message_time_to_live == timedelta(days=1)
        assert read.dead_lettering_on_message_expiration is True
        assert read.requires_duplicate_detection is True
        assert read.duplicate_detection_history_time_window == timedelta(minutes=2)
        assert read.max_size_in_megabytes == 2048
        assert read.user_metadata == "made by the admin test"
        with pytest.raises(ResourceExistsError):
            admin.create_queue("made-by-api")

    with client.get_queue_sender("made-by-api") as sender:
        sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(3)])
        sender.schedule_messages(
            ServiceBusMessage("later"), datetime.now(timezone.utc) + timedelta(hours=1)
        )
    with client.get_queue_receiver("made-by-api") as receiver:
        (first,) = receive_exactly(receiver, 1)
        receiver.dead_letter_message(first, reason="test")

    with admin_client(broker) as admin:
        runtime = admin.get_queue_runtime_properties("made-by-api")
        assert runtime.active_message_count == 2
        assert runtime.dead_letter_message_count == 1
        assert runtime.scheduled_message_count == 1
        assert runtime.total_message_count == 4
        assert runtime.size_in_bytes > 0
        names = [queue.name for queue in admin.list_queues()]
        assert "made-by-api" in names and "q-send-receive" in names


def test_the_unchanged_client_speaks_https_trusting_the_development_ca(broker, client):
    # The emulator connection string with the admin port, as a user writes it; no workaround.
    # `connection_verify` reaches `requests` (azure-core's RequestsTransport) as `verify`.
    conn = connection_string(broker.admin_port)
    with ServiceBusAdministrationClient.from_connection_string(
        conn, connection_verify=broker.admin_ca
    ) as admin:
        created = admin.create_queue("made-over-https", max_delivery_count=4)
        assert created.name == "made-over-https"
        assert admin.get_queue("made-over-https").max_delivery_count == 4

    with client.get_queue_sender("made-over-https") as sender:
        sender.send_messages(ServiceBusMessage("over amqp"))
    with ServiceBusAdministrationClient.from_connection_string(
        conn, connection_verify=broker.admin_ca
    ) as admin:
        runtime = admin.get_queue_runtime_properties("made-over-https")
        assert runtime.active_message_count == 1

    # It was https, and the certificate is really checked: without the CA, the client refuses.
    with ServiceBusAdministrationClient.from_connection_string(conn, retry_total=0) as distrusting:
        with pytest.raises(ServiceRequestError, match="CERTIFICATE_VERIFY_FAILED"):
            distrusting.get_queue("made-over-https")


def test_missing_queues_raise_resource_not_found(broker):
    with admin_client(broker) as admin:
        with pytest.raises(ResourceNotFoundError):
            admin.get_queue("no-such-queue")
        with pytest.raises(ResourceNotFoundError):
            admin.delete_queue("no-such-queue")


def test_an_update_of_the_lock_duration_takes_effect(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("lock-change", lock_duration=timedelta(seconds=10))
        queue = admin.get_queue("lock-change")
        queue.lock_duration = timedelta(minutes=2)
        admin.update_queue(queue)
        assert admin.get_queue("lock-change").lock_duration == timedelta(minutes=2)
    with client.get_queue_sender("lock-change") as sender:
        sender.send_messages(ServiceBusMessage("held"))
    with client.get_queue_receiver("lock-change") as receiver:
        (message,) = receive_exactly(receiver, 1)
        held_for = message.locked_until_utc - datetime.now(timezone.utc)
        assert held_for > timedelta(seconds=90), held_for


def test_a_deleted_queue_refuses_sends_with_the_not_found_error(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("short-lived")
    with client.get_queue_sender("short-lived") as sender:
        sender.send_messages(ServiceBusMessage("gone with it"))
    with admin_client(broker) as admin:
        admin.delete_queue("short-lived")
        assert "short-lived" not in [queue.name for queue in admin.list_queues()]
    # As Service Bus: the $cbs put-token for a missing entity is refused with its not-found text.
    with ServiceBusClient.from_connection_string(broker.connection_string, retry_total=0) as fresh:
        with pytest.raises(ServiceBusAuthenticationError) as raised:
            with fresh.get_queue_sender("short-lived") as sender:
                sender.send_messages(ServiceBusMessage("refused"))
    assert "could not be found" in str(raised.value.inner_exception)


def test_a_sender_open_across_the_delete_is_refused_with_not_found(broker, client):
    from azure.servicebus.exceptions import MessagingEntityNotFoundError

    with admin_client(broker) as admin:
        admin.create_queue("deleted-under-a-sender")
    with client.get_queue_sender("deleted-under-a-sender") as sender:
        sender.send_messages(ServiceBusMessage("before"))
        with admin_client(broker) as admin:
            admin.delete_queue("deleted-under-a-sender")
        with pytest.raises(MessagingEntityNotFoundError):
            sender.send_messages(ServiceBusMessage("after"))


def test_a_restart_keeps_queues_made_through_the_api_with_their_messages(own_broker):
    with admin_client(own_broker) as admin:
        admin.create_queue("kept-by-restart", max_delivery_count=4)
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        with client.get_queue_sender("kept-by-restart") as sender:
            sender.send_messages(ServiceBusMessage("survivor"))
    own_broker.stop()
    own_broker.start()
    with admin_client(own_broker) as admin:
        assert admin.get_queue("kept-by-restart").max_delivery_count == 4
        runtime = admin.get_queue_runtime_properties("kept-by-restart")
        assert runtime.active_message_count == 1
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        assert [str(m) for m in peek_all(client, "kept-by-restart")] == ["survivor"]


def test_a_wrong_key_is_refused(broker):
    wrong = ServiceBusAdministrationClient.from_connection_string(
        connection_string(broker.admin_port, key="NOT_THE_KEY")
    )
    wrong._impl._client._base_url = f"http://localhost:{broker.admin_port}"
    with wrong:
        with pytest.raises(Exception) as raised:
            wrong.get_queue("q-send-receive")
    assert getattr(raised.value, "status_code", None) == 401


def test_topics_subscriptions_and_rules_are_managed_and_route_messages(broker, client):
    from azure.servicebus.management import CorrelationRuleFilter, SqlRuleFilter

    with admin_client(broker) as admin:
        admin.create_topic("api-topic", default_message_time_to_live=timedelta(hours=2))
        assert admin.get_topic("api-topic").default_message_time_to_live == timedelta(hours=2)
        admin.create_subscription("api-topic", "everything", max_delivery_count=5)
        admin.create_subscription("api-topic", "red-only", lock_duration=timedelta(seconds=45))
        assert admin.get_subscription("api-topic", "red-only").lock_duration == timedelta(
            seconds=45
        )
        admin.create_rule("api-topic", "red-only", "red", filter=SqlRuleFilter("color = 'red'"))
        admin.delete_rule("api-topic", "red-only", "$Default")
        admin.create_rule(
            "api-topic", "red-only", "urgent", filter=CorrelationRuleFilter(label="urgent")
        )
        rules = {rule.name: rule for rule in admin.list_rules("api-topic", "red-only")}
        assert set(rules) == {"red", "urgent"}
        assert rules["red"].filter.sql_expression == "color = 'red'"
        assert rules["urgent"].filter.label == "urgent"
        default = admin.get_rule("api-topic", "everything", "$Default")
        assert default.filter.sql_expression == "1=1"
        with pytest.raises(ResourceExistsError):
            admin.create_rule("api-topic", "red-only", "red", filter=SqlRuleFilter("1=1"))
        with pytest.raises(ResourceNotFoundError):
            admin.get_rule("api-topic", "red-only", "$Default")

    with client.get_topic_sender("api-topic") as sender:
        sender.send_messages(ServiceBusMessage("r", application_properties={"color": "red"}))
        sender.send_messages(ServiceBusMessage("b", application_properties={"color": "blue"}))
        sender.send_messages(ServiceBusMessage("u", subject="urgent"))

    with admin_client(broker) as admin:
        counts = {
            name: admin.get_subscription_runtime_properties("api-topic", name)
            for name in ("everything", "red-only")
        }
        assert counts["everything"].active_message_count == 3
        assert counts["red-only"].active_message_count == 2
        topic = admin.get_topic_runtime_properties("api-topic")
        assert topic.subscription_count == 2
        names = [s.name for s in admin.list_subscriptions("api-topic")]
        assert names == ["everything", "red-only"]

        admin.delete_subscription("api-topic", "everything")
        with pytest.raises(ResourceNotFoundError):
            admin.get_subscription("api-topic", "everything")
        admin.delete_topic("api-topic")
        with pytest.raises(ResourceNotFoundError):
            admin.get_topic("api-topic")


def test_sql_rules_with_typed_parameters_route_and_read_back_across_a_restart(own_broker):
    from azure.core.exceptions import HttpResponseError
    from azure.servicebus.management import SqlRuleAction, SqlRuleFilter

    since = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    filter_parameters = {
        "@c": "red",
        "@n": 3,
        "@big": 2**40,
        "@ratio": 0.5,
        "@urgent": True,
        "@since": since,
        "@wait": timedelta(minutes=5),
    }
    expression = (
        "color = @c AND size > @n AND total < @big AND ratio >= @ratio AND urgent = @urgent "
        "AND at > @since"
    )
    with admin_client(own_broker) as admin:
        admin.create_topic("param-topic")
        admin.create_subscription("param-topic", "typed")
        admin.delete_rule("param-topic", "typed", "$Default")
        admin.create_rule(
            "param-topic",
            "typed",
            "red-and-big",
            filter=SqlRuleFilter(expression, parameters=filter_parameters),
            action=SqlRuleAction("SET sys.Label = @l", parameters={"@l": "routed"}),
        )
        with pytest.raises(HttpResponseError) as refused:
            admin.create_rule(
                "param-topic", "typed", "unbound", filter=SqlRuleFilter("color = @missing")
            )
        assert refused.value.status_code == 400
        assert "'@missing' is not defined" in str(refused.value)

    def read_back(admin):
        (listed,) = admin.list_rules("param-topic", "typed")
        for rule in (admin.get_rule("param-topic", "typed", "red-and-big"), listed):
            assert rule.filter.sql_expression == expression
            assert rule.filter.parameters == filter_parameters
            assert rule.action.sql_expression == "SET sys.Label = @l"
            assert rule.action.parameters == {"@l": "routed"}

    def routed():
        matching = {
            "color": "red",
            "size": 4,
            "total": 7,
            "ratio": 0.5,
            "urgent": True,
            "at": since + timedelta(days=1),
        }
        sent = {
            "match": matching,
            "small": {**matching, "size": 3},
            "blue": {**matching, "color": "blue"},
            "early": {**matching, "at": since},
        }
        with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
            with client.get_topic_sender("param-topic") as sender:
                sender.send_messages(
                    [
                        ServiceBusMessage(body, application_properties=properties)
                        for body, properties in sent.items()
                    ]
                )
            # Only the matching message was copied to the subscription.
            with admin_client(own_broker) as admin:
                runtime = admin.get_subscription_runtime_properties("param-topic", "typed")
                assert runtime.active_message_count == 1
            with client.get_subscription_receiver("param-topic", "typed") as receiver:
                (message,) = receive_exactly(receiver, 1)
                receiver.complete_message(message)
                return str(message), message.subject

    with admin_client(own_broker) as admin:
        read_back(admin)
    assert routed() == ("match", "routed")
    own_broker.stop()
    own_broker.start()
    with admin_client(own_broker) as admin:
        read_back(admin)
    assert routed() == ("match", "routed")
