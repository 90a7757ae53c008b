"""The README quickstart: a five-line Python snippet against `busbar` started with no arguments.

The broker runs with its default configuration (the emulator's entities, `queue.1`) as a new user
would start it; only the port differs, because the suite must not take 5672, so the snippets'
`sb://localhost;` endpoint is pointed at the broker's port before they run.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SNIPPET_TIMEOUT_SECS = 60

QUICKSTART = """\
from azure.servicebus import ServiceBusClient, ServiceBusMessage
conn = "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
with ServiceBusClient.from_connection_string(conn) as client:
    client.get_queue_sender("queue.1").send_messages(ServiceBusMessage("hello, busbar"))
    print(client.get_queue_receiver("queue.1", max_wait_time=5).receive_messages()[0])
"""

_DEFAULT_ENDPOINT = re.compile(r"sb://localhost(:5672)?;")


def run_snippet(source, port):
    """Runs `source` in a fresh interpreter with its endpoint on `port`; returns its stdout."""
    pointed = _DEFAULT_ENDPOINT.sub(f"sb://localhost:{port};", source)
    assert pointed != source, "the snippet does not use the emulator endpoint sb://localhost"
    finished = subprocess.run(
        [sys.executable, "-c", pointed],
        capture_output=True,
        text=True,
        timeout=SNIPPET_TIMEOUT_SECS,
        check=False,
    )
    assert finished.returncode == 0, f"snippet failed:\n{finished.stdout}\n{finished.stderr}"
    return finished.stdout


def readme_python_snippets():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_quickstart_snippet_sends_and_receives(default_broker):
    assert len(QUICKSTART.splitlines()) == 5
    assert run_snippet(QUICKSTART, default_broker.port) == "hello, busbar\n"


def test_readme_python_snippet_runs_against_a_fresh_broker(default_broker):
    snippets = readme_python_snippets()
    if not snippets:
        pytest.fail(f"{README} has no ```python quickstart block; this one works:\n{QUICKSTART}")
    output = run_snippet(snippets[0], default_broker.port)
    assert output.strip(), "the README snippet printed nothing: it should show the received message"
