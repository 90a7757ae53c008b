"""Small helpers shared by the SDK tests: message bodies, bounded receives and polling, and
calls to Busbar's own SAS-authorised JSON endpoints (`/$busbar/…`)."""

import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request

from azure.servicebus import ServiceBusClient, ServiceBusMessage

# The emulator's key name and key, as in its documented connection string.
KEY_NAME = "RootManageSharedAccessKey"
KEY = "SAS_KEY_VALUE"

# Upper bounds that only guard against a hung broker; tests proceed as soon as the outcome is in.
RECEIVE_GUARD_SECS = 20


def connection_string(port, key=KEY):
    """The emulator-style connection string for a broker on localhost:`port`."""
    return (
        f"Endpoint=sb://localhost:{port};SharedAccessKeyName={KEY_NAME};"
        f"SharedAccessKey={key};UseDevelopmentEmulator=true;"
    )


def sas_token(url, key=KEY, valid_secs=300, key_name=KEY_NAME):
    """A `SharedAccessSignature` header value for `url`, signed with `key` (by default the
    emulator's) of the rule `key_name`."""
    audience = urllib.parse.quote_plus(url)
    expiry = str(int(time.time()) + valid_secs)
    signature = hmac.new(key.encode(), f"{audience}\n{expiry}".encode(), hashlib.sha256)
    return (
        f"SharedAccessSignature sr={audience}&sig="
        f"{urllib.parse.quote_plus(base64.b64encode(signature.digest()))}&se={expiry}&skn={key_name}"
    )


def body_text(message):
    """The body of a received message (sent as a string) as text."""
    return b"".join(message.body).decode()


def bodies(messages):
    return [body_text(message) for message in messages]


def receive_exactly(receiver, count, guard_secs=RECEIVE_GUARD_SECS):
    """Receives until `count` messages arrived (fails after `guard_secs`).

    A single `receive_messages` call returns shortly after the first message, so a test that
    needs several calls to gather all of them loops here.
    """
    received = []
    deadline = time.monotonic() + guard_secs
    while len(received) < count:
        remaining = deadline - time.monotonic()
        assert remaining > 0, (
            f"received only {len(received)} of {count} messages in {guard_secs} s: "
            f"{bodies(received)}"
        )
        received += receiver.receive_messages(
            max_message_count=count - len(received), max_wait_time=remaining
        )
    assert len(received) == count, f"asked for {count}, got {bodies(received)}"
    return received


def receive_one(receiver, guard_secs=RECEIVE_GUARD_SECS):
    return receive_exactly(receiver, 1, guard_secs)[0]


def peek_all(client, queue_name, sub_queue=None):
    """Every message currently in the queue (or its dead-letter queue), from a fresh receiver."""
    with client.get_queue_receiver(queue_name, sub_queue=sub_queue) as receiver:
        return receiver.peek_messages(max_message_count=100, sequence_number=1)


def send_texts(client, queue_name, texts, **message_fields):
    """Sends one message per text, one transfer each, waiting for each acknowledgement."""
    with client.get_queue_sender(queue_name) as sender:
        for text in texts:
            sender.send_messages(ServiceBusMessage(text, **message_fields))


def wait_until(condition, what, guard_secs=RECEIVE_GUARD_SECS, interval_secs=0.25):
    """Polls `condition` until it holds; fails naming `what` after `guard_secs`."""
    deadline = time.monotonic() + guard_secs
    while True:
        result = condition()
        if result:
            return result
        assert time.monotonic() < deadline, f"{what} did not happen within {guard_secs} s"
        time.sleep(interval_secs)


def strict_client(connection_string):
    """A client that does not retry, for tests that expect an error: it surfaces at once."""
    return ServiceBusClient.from_connection_string(
        connection_string, retry_total=0, retry_backoff_factor=0.1
    )


def api(broker, method, path, body=None, key_name=KEY_NAME, key=KEY):
    """Calls a `/$busbar/` endpoint with a SAS token of `key_name` (by default the emulator's)
    and an optional JSON `body`; returns (status, decoded JSON body, or None for an error)."""
    url = f"http://127.0.0.1:{broker.admin_port}{path}"
    token = sas_token(url, key=key, key_name=key_name)
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Authorization": token}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, None
