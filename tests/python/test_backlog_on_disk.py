"""A backlog many times the memory budget, through the official SDK: message bytes are evicted
to the store and read back for every receive, peek, deferred receive and session, also after a
SIGKILL (and on PostgreSQL, where tests/postgres_e2e.rs runs this file too)."""

import urllib.request

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage

from conftest import QUEUES, Broker, _serving, busbar_binary
from support import body_text, receive_exactly, receive_one

QUEUE = "q-backlog"
SESSIONS = "q-backlog-sessions"
# 40 messages of about 60 KiB hold the budget below (4 MiB); the backlog is ten times that.
BUDGET = "4MiB"
BODY = 60 * 1024
BACKLOG = 400


def body(index):
    return f"{index:08d}".ljust(BODY, "x")


def metric(broker, name):
    url = f"http://127.0.0.1:{broker.admin_port}/metrics"
    with urllib.request.urlopen(url, timeout=30) as response:
        text = response.read().decode()
    line = next(line for line in text.splitlines() if line.startswith(name + " "))
    return float(line.split()[1])


def send_backlog(client):
    with client.get_queue_sender(QUEUE) as sender:
        # First a message to defer, then the backlog behind it.
        sender.send_messages(ServiceBusMessage("deferred, deep in the backlog"))
        for start in range(0, BACKLOG, 4):
            sender.send_messages([ServiceBusMessage(body(i)) for i in range(start, start + 4)])
    with client.get_queue_receiver(QUEUE, max_wait_time=10) as receiver:
        first = receive_one(receiver)
        assert body_text(first) == "deferred, deep in the backlog"
        receiver.defer_message(first)
    with client.get_queue_sender(SESSIONS) as sender:
        for start in range(0, 100, 4):
            sender.send_messages(
                [ServiceBusMessage(body(i), session_id="bulk") for i in range(start, start + 4)]
            )
        sender.send_messages(ServiceBusMessage("the last session", session_id="deep"))
    return first.sequence_number


@pytest.fixture
def budgeted(tmp_path):
    """A broker whose memory budget holds a tenth of the backlog."""
    broker = Broker(busbar_binary(), tmp_path, QUEUES, extra_args=["--memory-budget", BUDGET])
    broker.start()
    yield from _serving(broker)


def test_a_backlog_past_the_budget_survives_a_kill_and_reads_back_in_order(budgeted):
    with ServiceBusClient.from_connection_string(budgeted.connection_string) as client:
        deferred = send_backlog(client)
    assert metric(budgeted, "busbar_cache_evictions_total") > BACKLOG / 2
    assert metric(budgeted, "busbar_memory_used_bytes") < 4 * 1024 * 1024 + BODY * 8

    budgeted.kill()
    budgeted.start()
    with ServiceBusClient.from_connection_string(budgeted.connection_string) as client:
        with client.get_queue_receiver(QUEUE, max_wait_time=10) as receiver:
            # Peek and a deferred receive deep in the backlog, read from the store.
            peeked = receiver.peek_messages(max_message_count=3, sequence_number=deferred + 200)
            assert [body_text(m)[:8] for m in peeked] == ["00000199", "00000200", "00000201"]
            (again,) = receiver.receive_deferred_messages([deferred])
            assert body_text(again) == "deferred, deep in the backlog"
            receiver.complete_message(again)
            for start in range(0, BACKLOG, 50):
                batch = receive_exactly(receiver, 50)
                assert [body_text(m) for m in batch] == [
                    body(i) for i in range(start, start + 50)
                ]
                for message in batch:
                    receiver.complete_message(message)
        with client.get_queue_receiver(SESSIONS, session_id="deep", max_wait_time=10) as deep:
            (last,) = receive_exactly(deep, 1)
            assert body_text(last) == "the last session"
            deep.complete_message(last)
        with client.get_queue_receiver(SESSIONS, session_id="bulk", max_wait_time=10) as bulk:
            messages = receive_exactly(bulk, 100)
            assert [body_text(m) for m in messages] == [body(i) for i in range(100)]
            for message in messages:
                bulk.complete_message(message)
    assert metric(budgeted, "busbar_cache_read_bytes_total") >= BACKLOG * BODY
    assert metric(budgeted, "servicebus_active_messages{entity_name=\"q-backlog\"}") == 0
