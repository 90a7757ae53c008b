"""One `busbar` process for a test run: started on free loopback ports in a temporary directory,
ready once it has printed its listening lines (no sleeping), stopped with SIGTERM (killed if it
lingers), and killed by the kernel if the test process itself dies first (Linux)."""

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from .. import binary
from .controls import KEY, KEY_NAME, Controls

START_TIMEOUT_SECS = 30
# SIGTERM's grace before SIGKILL: an idle broker exits in milliseconds, but one whose clients
# left connections open waits seconds for their close; its data is thrown away regardless.
STOP_GRACE_SECS = 0.5

# The start-up lines that name what the broker bound, in the order it prints them.
_READY = {
    "port": re.compile(r"^listening on .*:(\d+)$"),
    "amqps_port": re.compile(r"^amqps listening on .*:(\d+)$"),
    "admin_port": re.compile(r"^admin listening on .*:(\d+)$"),
    "ca_file": re.compile(r"^tls ca: (.+)$"),
}


def _die_with_parent():
    """Asks Linux to SIGKILL the broker when the process that started it dies."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _duration(by):
    if isinstance(by, timedelta):
        return f"{int(by.total_seconds() * 1000)}ms"
    return str(by)


class Broker:
    """A running broker: its connection strings, admin endpoint and controls.

    `storage` is "memory" (the default) or "file" (messages under the temporary directory);
    `config` is the emulator's `Config.json` as a dict, or a path to one (without it the
    emulator's default entities: queue `queue.1`, topic `topic.1` with `subscription.1`).
    """

    def __init__(self, storage="memory", config=None, extra_args=(), binary_path=None):
        if storage not in ("memory", "file"):
            raise ValueError(f"storage is 'memory' or 'file', not {storage!r}")
        self.directory = Path(tempfile.mkdtemp(prefix="busbar-"))
        self.log_path = self.directory / "busbar.log"
        arguments = [binary_path or binary(), "--test-controls"]
        arguments += ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0"]
        arguments += ["--admin-listen", "127.0.0.1:0"]
        arguments += ["--memory"] if storage == "memory" else ["--data-dir", "data"]
        if isinstance(config, dict):
            (self.directory / "Config.json").write_text(json.dumps(config))
            config = self.directory / "Config.json"
        if config is not None:
            arguments += ["--config", str(Path(config).resolve())]
        arguments += list(extra_args)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                arguments,
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info")},
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        self._lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        try:
            self._await_ready()
        except BaseException:
            self.stop()
            raise
        self.controls = Controls(self.admin_endpoint)

    def _pump(self):
        # Reads stdout to its end, so the broker never blocks on a full pipe, into the log too.
        with open(self.log_path, "ab") as log:
            for raw in iter(self.process.stdout.readline, b""):
                log.write(raw)
                log.flush()
                self._lines.put(raw.decode(errors="replace").rstrip("\r\n"))
        self._lines.put(None)

    def _await_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_SECS
        missing = dict(_READY)
        while missing:
            remaining = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(remaining, 0))
            except queue.Empty:
                line = None
            if line is None:
                raise RuntimeError(
                    f"busbar did not start (exit status {self.process.poll()}):\n{self.log()}"
                )
            for name, pattern in list(missing.items()):
                found = pattern.match(line)
                if found:
                    value = found.group(1)
                    setattr(self, name, value if name == "ca_file" else int(value))
                    del missing[name]

    @property
    def connection_string(self):
        """The emulator form, plain AMQP: `Endpoint=sb://localhost:PORT;…;UseDevelopmentEmulator=true;`."""
        return (
            f"Endpoint=sb://localhost:{self.port};SharedAccessKeyName={KEY_NAME};"
            f"SharedAccessKey={KEY};UseDevelopmentEmulator=true;"
        )

    @property
    def production_connection_string(self):
        """The service's form, for AMQPS: use it with `amqps_endpoint` as the SDK's custom endpoint
        address and `ca_file` trusted (`client(tls=True)` does both)."""
        return f"Endpoint=sb://localhost/;SharedAccessKeyName={KEY_NAME};SharedAccessKey={KEY}"

    @property
    def amqps_endpoint(self):
        return f"sb://localhost:{self.amqps_port}"

    @property
    def admin_endpoint(self):
        """The administration API and test controls, plain HTTP (https too, with `ca_file`)."""
        return f"http://127.0.0.1:{self.admin_port}"

    @property
    def admin_connection_string(self):
        """For `ServiceBusAdministrationClient` (https, with `connection_verify=ca_file`)."""
        return (
            f"Endpoint=sb://localhost:{self.admin_port};SharedAccessKeyName={KEY_NAME};"
            f"SharedAccessKey={KEY};UseDevelopmentEmulator=true;"
        )

    def client(self, tls=False, **options):
        """An `azure.servicebus.ServiceBusClient` for this broker: plain AMQP with the emulator
        connection string, or with `tls=True` the production form over AMQPS trusting the CA."""
        from azure.servicebus import ServiceBusClient, TransportType

        if not tls:
            return ServiceBusClient.from_connection_string(self.connection_string, **options)
        return ServiceBusClient.from_connection_string(
            self.production_connection_string,
            transport_type=TransportType.Amqp,
            custom_endpoint_address=self.amqps_endpoint,
            connection_verify=self.ca_file,
            **options,
        )

    def create_queue(self, name, **properties):
        """Creates a queue: properties by their Service Bus names (`RequiresSession=True`)."""
        self.controls.put_entity(name, "QueueDescription", properties)

    def create_topic(self, name, **properties):
        self.controls.put_entity(name, "TopicDescription", properties)

    def create_subscription(self, topic, name, **properties):
        self.controls.put_entity(f"{topic}/Subscriptions/{name}", "SubscriptionDescription", properties)

    def purge(self, entity, dead_letter=False):
        """Removes an entity's messages (only its dead-letter queue's with `dead_letter`)."""
        return self.controls.purge(entity, dead_letter)

    def reset(self):
        """Back to the configured entities, empty: entities created since are deleted."""
        self.controls.reset()

    def advance_clock(self, by):
        """Moves the virtual clock ahead: "2h", "90s", "PT1H" or a `timedelta`."""
        return self.controls.advance_clock(_duration(by))

    def fault(self, entity, kind, count=1, condition=None, delay=None):
        """Arms a fault on an entity: "server-busy" or "lock-lost" (the next `count` sends or
        settlements), "detach-link" or "drop-connection" (with an AMQP `condition`), "delay"
        (the next `count` answers late by `delay`, a `timedelta` or milliseconds)."""
        document = {"kind": kind}
        if kind in ("server-busy", "lock-lost", "delay"):
            document["count"] = count
        if condition is not None:
            document["condition"] = condition
        if delay is not None:
            millis = delay.total_seconds() * 1000 if isinstance(delay, timedelta) else delay
            document["millis"] = int(millis)
        self.controls.fault(entity, document)

    def log(self):
        """What the broker printed so far (stdout and its log on stderr); empty once stopped."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self):
        """SIGTERM, then SIGKILL after a short grace; removes the directory; idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_GRACE_SECS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
