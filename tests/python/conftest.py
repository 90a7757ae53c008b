"""Fixtures that run the real `busbar` binary for the official Python SDK tests.

Each test module gets its own broker: a fresh temporary data directory, a test `Config.json`
(the Service Bus emulator's format) with one queue per test and one topic, and
`--listen 127.0.0.1:0`; the ports are read from the broker's `listening on ADDR:PORT` and
`admin listening on ADDR:PORT` lines on stdout, and the development CA that the admin port's
https certificate is signed by from its `tls ca: PATH` line (created in the data
directory, so one per broker). Stopping sends SIGTERM and asserts exit status 0.
"""

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from azure.servicebus import ServiceBusClient

from support import connection_string

# How long the broker may take to start listening, or to exit after SIGTERM.
START_TIMEOUT_SECS = 30
STOP_TIMEOUT_SECS = 20

# Every queue the suite uses, one per test so that tests stay independent while sharing a
# broker per module. Properties not listed keep the emulator defaults (§9.4 of
# servicebus-amqp.md): LockDuration PT1M, MaxDeliveryCount 3, TTL PT1H, no duplicate detection.
QUEUES = {
    "q-send-receive": {},
    "q-properties": {},
    "q-batch": {},
    "q-receive-and-delete": {},
    "q-complete": {},
    "q-abandon": {"MaxDeliveryCount": 10},
    "q-dead-letter": {},
    "q-dead-letter-bare": {},
    "q-defer": {},
    "q-deferred-dead-letter": {},
    "q-peek": {},
    "q-peek-dlq": {},
    "q-lock-renewal": {"LockDuration": "PT5S", "MaxDeliveryCount": 10},
    "q-lock-expiry": {"LockDuration": "PT5S", "MaxDeliveryCount": 10},
    "q-lock-lost-renew": {"LockDuration": "PT5S", "MaxDeliveryCount": 10},
    "q-max-delivery": {"LockDuration": "PT5S", "MaxDeliveryCount": 3},
    "q-max-delivery-expiry": {"LockDuration": "PT5S", "MaxDeliveryCount": 2},
    "q-schedule": {},
    "q-schedule-on-send": {},
    "q-cancel-schedule": {},
    "q-dedup": {
        "RequiresDuplicateDetection": True,
        "DuplicateDetectionHistoryTimeWindow": "PT1M",
    },
    "q-no-dedup": {},
    "q-http-to-amqp": {},
    "q-amqp-to-http": {},
    "q-ttl-dead-letter": {
        "DefaultMessageTimeToLive": "PT2S",
        "DeadLetteringOnMessageExpiration": True,
    },
    "q-ttl-drop": {"DefaultMessageTimeToLive": "PT2S"},
    "q-message-ttl": {"DeadLetteringOnMessageExpiration": True},
    "q-large": {},
    "q-binary": {},
    "q-volume": {},
    "q-full-batch": {},
    "q-oversize": {},
    "q-oversize-far": {},
    # MaxSizeInMegabytes is Busbar's extension of the emulator schema (test_errors.py).
    "q-quota": {"MaxSizeInMegabytes": 1},
    "q-auth": {},
    "q-auth-receive": {},
    "q-restart": {},
    "q-reconnect": {},
    # Session queues (test_sessions.py).
    "q-clock-ttl": {"DefaultMessageTimeToLive": "PT1H", "DeadLetteringOnMessageExpiration": True},
    "q-clock-schedule": {},
    "q-amqps": {},
    "q-websocket": {},
    "q-one-port": {},
    "q-clock-lock": {"LockDuration": "PT1M", "MaxDeliveryCount": 10},
    "q-clock-session": {"RequiresSession": True, "LockDuration": "PT1M"},
    "q-fault-busy": {},
    "q-fault-lock": {},
    "q-purge": {},
    "q-fault-detach": {},
    "q-fault-drop": {},
    "q-fault-delay": {},
    "q-session-plain": {"RequiresSession": True},
    # The explorer's JSON API (test_explorer_api.py).
    "q-api": {},
    "q-api-other": {},
    "q-api-sessions": {"RequiresSession": True},
    "q-failover-session": {"RequiresSession": True},
    "q-session-fifo": {"RequiresSession": True},
    "q-session-two": {"RequiresSession": True},
    "q-session-busy": {"RequiresSession": True},
    "q-session-empty": {"RequiresSession": True},
    "q-session-abandon": {"RequiresSession": True, "MaxDeliveryCount": 10},
    "q-session-close": {"RequiresSession": True},
    "q-session-expiry": {"RequiresSession": True, "LockDuration": "PT5S", "MaxDeliveryCount": 10},
    "q-session-state": {"RequiresSession": True},
    "q-session-renew": {"RequiresSession": True},
    "q-session-requests": {"RequiresSession": True},
    "q-session-replies": {"RequiresSession": True},
    "q-session-defer": {"RequiresSession": True},
    "q-session-list": {"RequiresSession": True},
    "q-sessions-disabled": {},
    "q-from-topic": {},
    # Dead-lettered messages forwarded (test_topic_rules.py).
    "q-dlq-forward-source": {"MaxDeliveryCount": 1, "ForwardDeadLetteredMessagesTo": "q-dlq-forward-target"},
    "q-dlq-forward-target": {},
    "q-filter-error-target": {},
    # A backlog past the memory budget (test_backlog_on_disk.py).
    "q-backlog": {},
    "q-backlog-sessions": {"RequiresSession": True},
    # GET /metrics (test_metrics.py).
    "q-metrics": {},
    "q-metrics-session": {"RequiresSession": True},
    "q-metrics-session-clock": {"RequiresSession": True, "LockDuration": "PT1M"},
    # Premium's larger message limit, configured (test_large_messages.py).
    "q-large-configured": {"MaxMessageSizeInKilobytes": 1024},
    # Status is read from Config.json as Service Bus's ARM templates name it (test_entity_status.py).
    "q-status-configured": {"Status": "Disabled"},
}


def _sql_rule(name, expression, action=None):
    properties = {"FilterType": "Sql", "SqlFilter": {"SqlExpression": expression}}
    if action is not None:
        properties["Action"] = {"SqlExpression": action}
    return {"Name": name, "Properties": properties}


def _topic(name, subscriptions, properties=None):
    return {
        "Name": name,
        "Properties": properties or {},
        "Subscriptions": [
            {"Name": sub, "Properties": properties, "Rules": rules}
            for sub, properties, rules in subscriptions
        ],
    }


# The topics of test_topic_rules.py, one per test (each send fans out to every subscription).
TOPIC_RULE_TOPICS = [
    _topic(
        "t-select",
        [
            ("all", {}, []),
            ("red-sql", {}, [_sql_rule("red", "color = 'red' AND quantity > 5")]),
            (
                "order-corr",
                {},
                [
                    {
                        "Name": "orders",
                        "Properties": {
                            "FilterType": "Correlation",
                            "CorrelationFilter": {"Label": "order", "Properties": {"priority": 1}},
                        },
                    }
                ],
            ),
        ],
    ),
    _topic(
        "t-action",
        [("doubled", {}, [_sql_rule("double", "1=1", "SET quantity = quantity * 2; SET sys.Label = 'doubled'")])],
    ),
    _topic("t-dlq", [("s", {}, [])]),
    # `color > 5` cannot be evaluated when color is a string: that copy is dead-lettered.
    _topic(
        "t-filter-error",
        [
            ("typed", {}, [_sql_rule("numeric", "color > 5")]),
            ("all", {}, []),
            (
                "typed-no-dlq",
                {"DeadLetteringOnFilterEvaluationExceptions": False},
                [_sql_rule("numeric", "color > 5")],
            ),
        ],
    ),
    _topic(
        "t-filter-error-forward",
        [("typed", {"ForwardDeadLetteredMessagesTo": "q-filter-error-target"}, [_sql_rule("numeric", "color > 5")])],
    ),
    _topic("t-forward", [("fwd", {"ForwardTo": "q-from-topic"}, [])]),
    _topic("t-restart", [("kept", {}, [_sql_rule("keep", "keep = TRUE")])]),
    _topic("t-runtime-rules", [("dynamic", {}, [])]),
    # A 1 MB quota (test_topics.py): "all" fills up, "rare" takes only kind = 'rare'.
    _topic(
        "t-quota",
        [("all", {}, []), ("rare", {}, [_sql_rule("rare", "kind = 'rare'")])],
        {"MaxSizeInMegabytes": 1},
    ),
]

# One topic: "all" has no rules (Service Bus's $Default rule, every message), "json" keeps only
# messages whose content type is application/json.
TOPICS = [
    {
        "Name": "t-fanout",
        "Properties": {},
        "Subscriptions": [
            {"Name": "all", "Properties": {}, "Rules": []},
            {
                "Name": "json",
                "Properties": {},
                "Rules": [
                    {
                        "Name": "json-only",
                        "Properties": {
                            "FilterType": "Correlation",
                            "CorrelationFilter": {"ContentType": "application/json"},
                        },
                    }
                ],
            },
        ],
    },
    *TOPIC_RULE_TOPICS,
]


def emulator_config(queues, topics=()):
    """The emulator's `Config.json` document declaring `queues` (name -> properties), `topics`."""
    return {
        "UserConfig": {
            "Namespaces": [
                {
                    "Name": "sbemulatorns",
                    "Queues": [
                        {"Name": name, "Properties": properties}
                        for name, properties in queues.items()
                    ],
                    "Topics": list(topics),
                }
            ],
            "Logging": {"Type": "Console"},
        }
    }


# The stable start-up line (`listening on 127.0.0.1:40123`), or, failing that, the connection
# string the binary prints; either names the port actually bound.
_LISTENING = re.compile(r"^listening on \[?[0-9a-fA-F.:]*?\]?:(\d+)")
_CONNECTION_STRING = re.compile(r"Endpoint=sb://[^;:/]+:(\d+)")
_AMQPS_LISTENING = re.compile(r"^amqps listening on \[?[0-9a-fA-F.:]*?\]?:(\d+)")
_ADMIN_LISTENING = re.compile(r"admin listening on \[?[0-9a-fA-F.:]*?\]?:(\d+)")
_ADMIN_TLS_CA = re.compile(r"^tls ca: (.+)$")


def _amqp_port(line):
    """The AMQP port of a start-up line, if it names one."""
    if _ADMIN_LISTENING.search(line):
        return None
    for pattern in (_LISTENING, _CONNECTION_STRING):
        found = pattern.search(line)
        # Port 0 is the request (`--listen 127.0.0.1:0`), not the bound port.
        if found and int(found.group(1)) != 0:
            return int(found.group(1))
    return None


def _standby_or_serving(line):
    if line.startswith("standby:"):
        return "standby"
    return "serving" if line.startswith("listening on ") else None


def _amqps_port(line):
    found = _AMQPS_LISTENING.search(line)
    return int(found.group(1)) if found else None


def _admin_port(line):
    found = _ADMIN_LISTENING.search(line)
    return int(found.group(1)) if found else None


def _admin_ca(line):
    found = _ADMIN_TLS_CA.match(line.rstrip("\r\n"))
    return found.group(1) if found else None


class Broker:
    """One `busbar` process, restartable on the same data directory."""

    def __init__(self, binary, workdir, config=None, test_controls=False, extra_args=()):
        # Absolute: the broker runs in the workdir.
        self.binary = os.path.abspath(binary)
        self.workdir = Path(workdir)
        self.data_dir = self.workdir / "data"
        self.config = config
        self.test_controls = test_controls
        self.extra_args = list(extra_args)
        self.process = None
        self.port = None
        self.starts = 0
        self._stdout_lines = queue.Queue()

    @property
    def connection_string(self):
        return connection_string(self.port)

    def start(self, port=0):
        """Starts the binary on `port` (0: any free port) and waits until it listens."""
        self._spawn(port)
        self._await_serving()

    def start_standby(self, port):
        """Starts a node that must stand by (another one holds the PostgreSQL lease) and waits
        for its standby line; it may be given the active node's `port`, since it binds nothing."""
        self._spawn(port)
        assert self._await_line(_standby_or_serving, "the standby line") == "standby"

    def await_takeover(self):
        """Waits until a standing-by node serves (it prints its listening lines)."""
        self._await_serving()

    def _spawn(self, port):
        assert self.process is None, "the broker is already running"
        self.starts += 1
        listen = f"127.0.0.1:{port}"
        # BUSBAR_STORAGE_URL (postgres://…, set by tests/postgres_e2e.rs) replaces the data
        # directory; the development CA then goes to ./busbar-data/tls, under the workdir.
        storage_url = os.environ.get("BUSBAR_STORAGE_URL")
        storage = ["--storage", storage_url] if storage_url else ["--data-dir", str(self.data_dir)]
        arguments = [
            self.binary,
            *storage,
            "--listen",
            listen,
            "--tls-listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
        ]
        if self.test_controls:
            arguments.append("--test-controls")
        arguments += self.extra_args
        if self.config is not None:
            config_path = self.workdir / "Config.json"
            config_path.write_text(json.dumps(emulator_config(self.config, TOPICS), indent=2))
            arguments += ["--config", str(config_path)]
        self._log_path = self.workdir / f"broker-{self.starts}.log"
        log = open(self._log_path, "wb")
        self.process = subprocess.Popen(
            arguments,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            cwd=self.workdir,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info")},
        )
        log.close()
        self._stdout_lines = queue.Queue()
        threading.Thread(
            target=_pump_lines, args=(self.process.stdout, self._stdout_lines), daemon=True
        ).start()

    def _await_serving(self):
        self.port = self._await_line(_amqp_port, "a listening port")
        self.amqps_port = self._await_line(_amqps_port, "an AMQPS listening port")
        self.admin_port = self._await_line(_admin_port, "an admin listening port")
        self.admin_ca = self._await_line(_admin_ca, "the admin port's development CA")

    def _await_line(self, parse, what):
        """The first value `parse` finds in the start-up lines not read yet; fails the test if
        the broker exits or stays silent first."""
        deadline = time.monotonic() + START_TIMEOUT_SECS
        seen = []
        while time.monotonic() < deadline:
            try:
                line = self._stdout_lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and self._stdout_lines.empty():
                    break
                continue
            if line is None:
                break
            seen.append(line)
            value = parse(line)
            if value is not None:
                return value
        status = self.process.poll()
        if status is None:
            self.process.kill()
            self.process.wait()
        self.process = None
        pytest.fail(
            f"busbar did not report {what} "
            f"(exit status {status}).\nstdout:\n{''.join(seen)}\nstderr:\n{self.log_tail()}"
        )

    def stop(self):
        """SIGTERM, then assert a clean exit (status 0) within the time limit."""
        process, self.process = self.process, None
        if process is None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=STOP_TIMEOUT_SECS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail(f"busbar ignored SIGTERM for {STOP_TIMEOUT_SECS} s\n{self.log_tail()}")
        assert status == 0, f"busbar exited with status {status} on SIGTERM\n{self.log_tail()}"

    def kill(self):
        """Ends the process without checking how (clean-up after a failed test)."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def restart(self, same_port=False):
        """Stops and starts on the same data directory.

        With `same_port`, connected clients can find the broker again; otherwise the port (and so
        the connection string) changes.
        """
        port = self.port if same_port else 0
        self.stop()
        self.start(port)

    def log_tail(self, lines=40):
        try:
            text = self._log_path.read_text(errors="replace")
        except (AttributeError, OSError):
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _pump_lines(stream, lines):
    # Reads stdout to its end so the broker never blocks on a full pipe.
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode(errors="replace"))
    lines.put(None)


def busbar_binary():
    binary = os.environ.get("BUSBAR_BIN")
    if not binary:
        pytest.exit(
            "BUSBAR_BIN is not set: point it at the busbar binary "
            "(cargo test runs these tests through tests/python_sdk.rs, which sets it)",
            returncode=2,
        )
    if not os.access(binary, os.X_OK):
        pytest.exit(f"BUSBAR_BIN={binary} is not an executable file", returncode=2)
    return binary


def running_broker(workdir, config, test_controls=False):
    """Starts a broker; the caller stops it (see the fixtures below)."""
    broker = Broker(busbar_binary(), workdir, config, test_controls)
    broker.start()
    return broker


def _finish(broker):
    # A test that left the broker stopped (a failed restart) has nothing to stop; otherwise the
    # clean SIGTERM exit is itself part of what the suite checks.
    if broker.process is not None and broker.process.poll() is not None:
        status = broker.process.returncode
        broker.process = None
        pytest.fail(f"busbar died during the tests (status {status})\n{broker.log_tail()}")
    broker.stop()


def _serving(instance):
    """Yields a started broker; afterwards stops it cleanly, or kills it if that fails."""
    try:
        yield instance
    finally:
        try:
            _finish(instance)
        finally:
            instance.kill()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A broker shared by one test module, with every queue of `QUEUES`."""
    yield from _serving(running_broker(tmp_path_factory.mktemp("busbar"), QUEUES))


@pytest.fixture
def controlled_broker(tmp_path):
    """A broker for one test alone started with --test-controls (virtual clock, faults)."""
    yield from _serving(running_broker(tmp_path, QUEUES, test_controls=True))


@pytest.fixture
def own_broker(tmp_path):
    """A broker for one test alone (for restarts), with every queue of `QUEUES`."""
    yield from _serving(running_broker(tmp_path, QUEUES))


@pytest.fixture
def default_broker(tmp_path):
    """A broker started without `--config`: the emulator's default entities (`queue.1`, …)."""
    yield from _serving(running_broker(tmp_path, None))


@pytest.fixture
def client(broker):
    """A `ServiceBusClient` on the module's broker; closed after the test."""
    with ServiceBusClient.from_connection_string(broker.connection_string) as sb_client:
        yield sb_client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attaches the tail of the broker's log to a failed test's report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for name in ("broker", "own_broker", "default_broker"):
        instance = item.funcargs.get(name) if hasattr(item, "funcargs") else None
        if isinstance(instance, Broker):
            report.sections.append((f"busbar log ({name})", instance.log_tail()))
