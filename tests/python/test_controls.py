"""Test controls through the official Python SDK: a virtual clock moved ahead with
`busbar ctl clock advance` (TTLs, schedules, message and session locks come due at once, no
sleeping), injected faults (server-busy, lock lost), purge and reset through the CLI and the
HTTP API, and none of it without `--test-controls`.
"""

import subprocess
import time
from datetime import datetime, timedelta, timezone

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.exceptions import (
    MessageLockLostError,
    ServiceBusError,
    ServiceBusServerBusyError,
    SessionLockLostError,
)

from support import api, bodies, peek_all, receive_exactly, strict_client


def ctl(broker, *arguments):
    """Runs `busbar ctl` against the broker's admin port; returns its standard output."""
    done = subprocess.run(
        [broker.binary, "ctl", "--admin", f"http://127.0.0.1:{broker.admin_port}", *arguments],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_one_hour_ttl_expires_after_the_clock_moves_two_hours(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-clock-ttl") as sender:
            sender.send_messages(ServiceBusMessage("short-lived"))
        ctl(controlled_broker, "clock", "advance", "2h")
        assert peek_all(client, "q-clock-ttl") == []
        with client.get_queue_receiver(
            "q-clock-ttl", sub_queue=ServiceBusSubQueue.DEAD_LETTER
        ) as dead_letters:
            (expired,) = receive_exactly(dead_letters, 1)
            assert str(expired) == "short-lived"
            assert expired.dead_letter_reason == "TTLExpiredException"


def test_a_message_scheduled_an_hour_ahead_arrives_after_an_advance(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-clock-schedule") as sender:
            in_an_hour = datetime.now(timezone.utc) + timedelta(hours=1)
            sender.schedule_messages(ServiceBusMessage("later"), in_an_hour)
        with client.get_queue_receiver("q-clock-schedule", max_wait_time=1) as receiver:
            assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
            ctl(controlled_broker, "clock", "advance", "PT61M")
            (arrived,) = receive_exactly(receiver, 1)
            assert str(arrived) == "later"


def test_a_message_lock_expires_after_an_advance_and_the_message_comes_back(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-clock-lock") as sender:
            sender.send_messages(ServiceBusMessage("held"))
        with client.get_queue_receiver("q-clock-lock") as receiver:
            (first,) = receive_exactly(receiver, 1)
            assert first.delivery_count == 0
            ctl(controlled_broker, "clock", "advance", "2m")
            (again,) = receive_exactly(receiver, 1)
            assert again.sequence_number == first.sequence_number
            assert again.delivery_count == 1
            receiver.complete_message(again)


def test_a_session_lock_expires_after_an_advance(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-clock-session") as sender:
            sender.send_messages(ServiceBusMessage("in a session", session_id="s1"))
        with client.get_queue_receiver("q-clock-session", session_id="s1") as receiver:
            receiver.session.renew_lock()
            ctl(controlled_broker, "clock", "advance", "2m")
            with pytest.raises(SessionLockLostError):
                receiver.session.renew_lock()


def test_server_busy_injection_is_raised_without_retries_and_retried_away_with_them(
    controlled_broker,
):
    ctl(controlled_broker, "fault", "q-fault-busy", "server-busy")
    with strict_client(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-fault-busy") as sender:
            with pytest.raises(ServiceBusServerBusyError):
                sender.send_messages(ServiceBusMessage("refused"))
    ctl(controlled_broker, "fault", "q-fault-busy", "server-busy", "--count", "1")
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-fault-busy") as sender:
            # The SDK backs off, retries and succeeds; the message is stored once.
            sender.send_messages(ServiceBusMessage("retried"))
        assert bodies(peek_all(client, "q-fault-busy")) == ["retried"]


def test_lock_lost_injection_raises_message_lock_lost(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-fault-lock") as sender:
            sender.send_messages(ServiceBusMessage("unlucky"))
        ctl(controlled_broker, "fault", "q-fault-lock", "lock-lost")
        with client.get_queue_receiver("q-fault-lock") as receiver:
            (message,) = receive_exactly(receiver, 1)
            with pytest.raises(MessageLockLostError):
                receiver.complete_message(message)


@pytest.mark.parametrize(
    ("queue", "kind", "condition"),
    [
        ("q-fault-detach", "detach-link", "amqp:link:detach-forced"),
        ("q-fault-drop", "drop-connection", "amqp:connection:forced"),
    ],
)
def test_a_receive_link_or_its_connection_is_ended_with_the_chosen_condition(
    controlled_broker, queue, kind, condition
):
    with strict_client(controlled_broker.connection_string) as client:
        with client.get_queue_receiver(queue) as receiver:
            # Attached and asking for messages: the entity knows the link.
            assert receiver.receive_messages(max_message_count=1, max_wait_time=1) == []
            ctl(controlled_broker, "fault", queue, kind, condition)
            with pytest.raises(ServiceBusError) as raised:
                receiver.receive_messages(max_message_count=1, max_wait_time=5)
    assert condition in str(raised.value)


def test_answers_are_delayed_as_asked(controlled_broker):
    ctl(controlled_broker, "fault", "q-fault-delay", "delay", "1500ms")
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-fault-delay") as sender:
            started = time.monotonic()
            sender.send_messages(ServiceBusMessage("late"))
            assert time.monotonic() - started >= 1.4
        assert bodies(peek_all(client, "q-fault-delay")) == ["late"]


def test_purge_and_reset_through_the_cli_and_the_api(controlled_broker):
    with ServiceBusClient.from_connection_string(controlled_broker.connection_string) as client:
        with client.get_queue_sender("q-purge") as sender:
            sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(3)])
        assert "purged 3 messages" in ctl(controlled_broker, "purge", "q-purge")
        assert peek_all(client, "q-purge") == []

        with client.get_queue_sender("q-purge") as sender:
            sender.send_messages([ServiceBusMessage("again")])
        assert api(controlled_broker, "POST", "/$busbar/purge/q-purge") == (200, {"purged": 1})
        assert peek_all(client, "q-purge") == []

        with client.get_queue_sender("q-purge") as sender:
            sender.send_messages([ServiceBusMessage("before reset")])
        ctl(controlled_broker, "reset")
        assert peek_all(client, "q-purge") == []
        with client.get_queue_sender("q-purge") as sender:
            sender.send_messages([ServiceBusMessage("before api reset")])
        assert api(controlled_broker, "POST", "/$busbar/reset") == (200, {})
        assert peek_all(client, "q-purge") == []


def test_every_control_endpoint_answers_404_without_the_flag(broker):
    for method, path in [
        ("POST", "/$busbar/purge/q-send-receive"),
        ("POST", "/$busbar/reset"),
        ("GET", "/$busbar/clock"),
        ("POST", "/$busbar/clock/advance?by=PT1H"),
        ("POST", "/$busbar/faults/q-send-receive"),
    ]:
        status, _ = api(broker, method, path)
        assert status == 404, (method, path, status)
