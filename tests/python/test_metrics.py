"""`GET /metrics` on the admin port, read as a Prometheus scraper reads it (plain HTTP, no
token): by default in the 0.0.4 text format, which a plain `curl` fetches for Debian's
`promtool check metrics` to lint, and in OpenMetrics when the Accept header asks for it. A
queue's traffic and message counts after sends and a receive through the official
SDK, a lock renewal, the store's sync histogram, a session locked, renewed, freed and (after a
clock advance) lost, the open connections, and a server-busy refusal (injected with
`busbar ctl`) counted as throttled once its connection has closed."""

import os
import re
import shutil
import subprocess
import time
import urllib.request

import pytest
from azure.servicebus import ServiceBusMessage
from azure.servicebus.exceptions import ServiceBusServerBusyError

from support import receive_exactly, strict_client

QUEUE = "q-metrics"


def scrape(broker):
    """The samples of `/metrics` (the 0.0.4 text format) as {(name, labels): value}."""
    url = f"http://127.0.0.1:{broker.admin_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        found = re.fullmatch(r"([a-z_]+)(\{[^}]*\})? (\S+)", line)
        assert found, f"not a sample line: {line!r}"
        samples[(found.group(1), found.group(2) or "")] = float(found.group(3))
    return samples


def promtool():
    """Debian's promtool (package `prometheus`), installed when missing (CI runs as root)."""
    if shutil.which("promtool") is None:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "prometheus"],
            check=True,
            env=env,
        )
    return shutil.which("promtool")


def test_a_plain_curl_gets_the_text_format_and_it_passes_promtool(broker):
    fetched = subprocess.run(
        ["curl", "-sS", "--fail", "-D", "-", f"http://127.0.0.1:{broker.admin_port}/metrics"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    # Text mode reads the header lines' CRLF as LF.
    headers, text = fetched.stdout.split("\n\n", 1)
    assert "content-type: text/plain; version=0.0.4" in headers.lower(), headers
    assert "servicebus_incoming_messages_total" in text
    assert "# EOF" not in text
    checked = subprocess.run(
        [promtool(), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_openmetrics_is_served_when_asked_for(broker):
    request = urllib.request.Request(
        f"http://127.0.0.1:{broker.admin_port}/metrics",
        headers={"Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("application/openmetrics-text")
        text = response.read().decode()
    assert "# TYPE servicebus_incoming_messages counter" in text
    assert text.endswith("# EOF\n")


def test_a_queue_counts_what_was_sent_and_received(broker, client):
    with client.get_queue_sender(QUEUE) as sender:
        sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(3)])
    with client.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
        (message,) = receive_exactly(receiver, 1)
        receiver.renew_message_lock(message)
        receiver.complete_message(message)

        samples = scrape(broker)
        entity = f'{{entity_name="{QUEUE}"}}'
        assert samples[("servicebus_incoming_messages_total", entity)] == 3
        assert samples[("servicebus_outgoing_messages_total", entity)] == 1
        assert samples[("servicebus_active_messages", entity)] == 2
        assert samples[("servicebus_messages", entity)] == 2
        assert samples[("servicebus_dead_lettered_messages", entity)] == 0
        assert samples[("servicebus_size_bytes", entity)] > 0
        assert samples[("servicebus_active_connections", "")] >= 1
        assert samples[("servicebus_connections_opened_total", "")] >= 1
        assert samples[("busbar_lock_renewals_total", entity)] == 1
        assert samples[("busbar_session_locks_lost_total", entity)] == 0
        assert samples[("busbar_lock_lost_answers_total", entity)] == 0
        assert samples[("busbar_inbox_depth", entity)] >= 0
        # The sends, the receive and the completion were each committed with a sync.
        assert samples[("busbar_store_sync_seconds_count", "")] >= 1
        assert samples[("busbar_store_sync_seconds_sum", "")] >= 0
        assert samples[("busbar_store_sync_seconds_bucket", '{le="+Inf"}')] >= 1
        assert samples[("busbar_store_group_size_count", "")] >= 1
        assert samples[("busbar_store_group_size_sum", "")] >= 1


def test_a_server_busy_refusal_is_throttled_and_a_closed_connection_counted(controlled_broker):
    broker = controlled_broker
    subprocess.run(
        [broker.binary, "ctl", "--admin", f"http://127.0.0.1:{broker.admin_port}",
         "fault", QUEUE, "server-busy"],
        check=True,
        capture_output=True,
        timeout=30,
    )
    with strict_client(broker.connection_string) as client:
        with client.get_queue_sender(QUEUE) as sender:
            with pytest.raises(ServiceBusServerBusyError):
                sender.send_messages(ServiceBusMessage("refused"))
    # The driver ends the connection task a moment after the client's close.
    closed = ("servicebus_connections_closed_total", "")
    deadline = time.monotonic() + 10
    samples = scrape(broker)
    while samples[closed] < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
        samples = scrape(broker)
    assert samples[closed] >= 1
    assert samples[("servicebus_throttled_requests_total", "")] >= 1
    assert samples[("servicebus_incoming_messages_total", f'{{entity_name="{QUEUE}"}}')] == 0


def test_a_locked_session_is_open_and_its_renewal_counted(broker, client):
    queue = "q-metrics-session"
    entity = f'{{entity_name="{queue}"}}'
    with client.get_queue_sender(queue) as sender:
        sender.send_messages(ServiceBusMessage("m", session_id="s"))
    with client.get_queue_receiver(queue, session_id="s", max_wait_time=5) as receiver:
        receiver.session.renew_lock()
        # The gauge is set after the round that locked the session, before the renewal's.
        samples = scrape(broker)
        assert samples[("busbar_open_sessions", entity)] == 1
        assert samples[("busbar_lock_renewals_total", entity)] == 1
    # The link's detach frees the session a moment after the receiver closes.
    deadline = time.monotonic() + 10
    samples = scrape(broker)
    while samples[("busbar_open_sessions", entity)] != 0 and time.monotonic() < deadline:
        time.sleep(0.1)
        samples = scrape(broker)
    assert samples[("busbar_open_sessions", entity)] == 0
    assert samples[("busbar_session_locks_lost_total", entity)] == 0


def test_an_expired_session_lock_is_counted_lost(controlled_broker):
    broker = controlled_broker
    queue = "q-metrics-session-clock"
    entity = f'{{entity_name="{queue}"}}'
    with strict_client(broker.connection_string) as client:
        with client.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("m", session_id="s"))
        with client.get_queue_receiver(queue, session_id="s"):
            assert scrape(broker)[("busbar_open_sessions", entity)] == 1
            subprocess.run(
                [broker.binary, "ctl", "--admin", f"http://127.0.0.1:{broker.admin_port}",
                 "clock", "advance", "2m"],
                check=True,
                capture_output=True,
                timeout=30,
            )
            # The entity task sees the advance and expires the 1 min lock.
            lost = ("busbar_session_locks_lost_total", entity)
            deadline = time.monotonic() + 10
            samples = scrape(broker)
            while samples[lost] < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
                samples = scrape(broker)
            assert samples[lost] == 1
            assert samples[("busbar_open_sessions", entity)] == 0
