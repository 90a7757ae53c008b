"""Active/passive failover with the Python SDK, run by tests/postgres_e2e.rs (which sets
BUSBAR_STORAGE_URL; the file is not named test_*.py so the plain suite does not collect it).

Two brokers on one database, the standby on the active one's port: while a session's messages
stream in and its state keeps changing, the active node is SIGKILLed. The standby takes over,
the SDK's retries carry the sender across, and the session keeps every acknowledged message in
order and its last confirmed state.
"""

import threading
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage

from conftest import QUEUES, Broker, busbar_binary
from support import body_text

QUEUE = "q-failover-session"
SESSION = "failover"
# Acknowledged sends before the kill, and after the takeover (carried by the SDK's retries).
BEFORE_KILL = 100
AFTER_TAKEOVER = 50
GUARD_SECS = 60


def _wait_until(condition, what):
    deadline = time.monotonic() + GUARD_SECS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_the_standby_takes_over_a_killed_node_keeping_sessions(tmp_path):
    active = Broker(busbar_binary(), tmp_path / "active", QUEUES)
    standby = Broker(busbar_binary(), tmp_path / "standby", QUEUES)
    (tmp_path / "active").mkdir()
    (tmp_path / "standby").mkdir()
    active.start()
    try:
        standby.start_standby(active.port)
        _run_failover(active, standby)
    finally:
        active.kill()
        standby.stop()


def _run_failover(active, standby):
    acked, failures = [], []
    stop = threading.Event()
    connection = active.connection_string
    with ServiceBusClient.from_connection_string(
        connection, retry_total=10, retry_backoff_factor=0.2, retry_backoff_max=2
    ) as client:

        def send_stream():
            try:
                with client.get_queue_sender(QUEUE) as sender:
                    index = 0
                    while not stop.is_set():
                        body = f"s-{index:06}"
                        sender.send_messages(ServiceBusMessage(body, session_id=SESSION))
                        acked.append(body)
                        index += 1
            except Exception as error:  # reported by the test below
                failures.append(error)

        sending = threading.Thread(target=send_stream)
        sending.start()
        confirmed_state, attempted_state = None, None
        with client.get_queue_receiver(QUEUE, session_id=SESSION) as receiver:
            step = 0
            while len(acked) < BEFORE_KILL:
                attempted_state = f"state-{step}".encode()
                receiver.session.set_state(attempted_state)
                confirmed_state = attempted_state
                step += 1
            killed = time.monotonic()
            active.kill()
            standby.await_takeover()
            print(f"takeover: the standby listened {1000 * (time.monotonic() - killed):.0f} ms after the SIGKILL")
        at_takeover = len(acked)
        _wait_until(lambda: failures or len(acked) >= at_takeover + AFTER_TAKEOVER, "sends after the takeover")
        stop.set()
        sending.join(GUARD_SECS)
        assert not failures, f"the sender did not get across: {failures[0]!r}"

        with client.get_queue_receiver(QUEUE, session_id=SESSION, max_wait_time=5) as receiver:
            assert receiver.session.get_state() in (confirmed_state, attempted_state)
            received = []
            while True:
                batch = receiver.receive_messages(max_message_count=100, max_wait_time=5)
                if not batch:
                    break
                for message in batch:
                    received.append(body_text(message))
                    receiver.complete_message(message)
    missing = set(acked) - set(received)
    assert not missing, f"{len(missing)} acknowledged messages lost, e.g. {sorted(missing)[:3]}"
    # In order; a send retried after its first attempt landed may repeat, right after itself.
    assert received == sorted(received), "the session's messages came out of order"
