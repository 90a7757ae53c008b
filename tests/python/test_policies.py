"""Shared-access policies (`--policies`) through the official SDK: each key's rights are enforced
on its links, either key of a rule signs, and the emulator's published key is refused."""

import base64
import json
import os
import secrets
import subprocess

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import (
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusError,
)

from conftest import Broker, QUEUES, _serving, busbar_binary
from support import body_text, receive_one, strict_client

QUEUE = "q-send-receive"


def fresh_key():
    return base64.b64encode(secrets.token_bytes(32)).decode()


KEYS = {
    "RootManageSharedAccessKey": fresh_key(),
    "sender": fresh_key(),
    "listener": fresh_key(),
    "listener-secondary": fresh_key(),
}


def policies():
    return {
        "SharedAccessPolicies": [
            {
                "KeyName": "RootManageSharedAccessKey",
                "PrimaryKey": KEYS["RootManageSharedAccessKey"],
                "Rights": ["Manage", "Send", "Listen"],
            },
            {"KeyName": "sender", "PrimaryKey": KEYS["sender"], "Rights": ["Send"]},
            {
                "KeyName": "listener",
                "PrimaryKey": KEYS["listener"],
                "SecondaryKey": KEYS["listener-secondary"],
                "Rights": ["Listen"],
            },
        ]
    }


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("policies")
    path = workdir / "policies.json"
    path.write_text(json.dumps(policies()))
    broker = Broker(busbar_binary(), workdir, QUEUES, extra_args=["--policies", str(path)])
    broker.start()
    yield from _serving(broker)


def conn(broker, name, key):
    return (
        f"Endpoint=sb://localhost:{broker.port};SharedAccessKeyName={name};"
        f"SharedAccessKey={key};UseDevelopmentEmulator=true;"
    )


def test_a_send_only_key_sends_and_cannot_receive(secured):
    with strict_client(conn(secured, "sender", KEYS["sender"])) as client:
        client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("from the sender"))
        with pytest.raises(ServiceBusAuthorizationError) as refused:
            client.get_queue_receiver(QUEUE, max_wait_time=2).receive_messages()
    assert "'Listen' claim(s) are required" in str(refused.value)
    with ServiceBusClient.from_connection_string(
        conn(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"])
    ) as manager:
        with manager.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
            message = receive_one(receiver)
            assert body_text(message) == "from the sender"
            receiver.complete_message(message)


def test_a_listen_only_key_receives_settles_and_cannot_send(secured):
    with ServiceBusClient.from_connection_string(
        conn(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"])
    ) as manager:
        manager.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("for the listener"))
    # The secondary key signs like the primary.
    for key in (KEYS["listener-secondary"], KEYS["listener"]):
        with strict_client(conn(secured, "listener", key)) as client:
            with pytest.raises(ServiceBusAuthorizationError) as refused:
                client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("no"))
            assert "'Send' claim(s) are required" in str(refused.value)
    with strict_client(conn(secured, "listener", KEYS["listener-secondary"])) as client:
        with client.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
            message = receive_one(receiver)
            assert body_text(message) == "for the listener"
            receiver.complete_message(message)
            assert receiver.peek_messages(max_message_count=5) == []


def test_the_emulator_key_and_a_wrong_key_are_refused(secured):
    for name, key in (
        ("RootManageSharedAccessKey", "SAS_KEY_VALUE"),
        ("sender", KEYS["listener"]),
        ("nobody", KEYS["sender"]),
    ):
        with strict_client(conn(secured, name, key)) as client:
            with pytest.raises(ServiceBusError) as refused:
                client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("no"))
        # The put-token's 401 (its text, "InvalidSignature: …", is checked in the broker's
        # tests: the SDK reports only the status).
        assert isinstance(refused.value, ServiceBusAuthenticationError)


def test_the_emulator_key_is_refused_at_start_up_off_loopback(tmp_path):
    started = subprocess.run(
        [os.path.abspath(busbar_binary()), "--memory", "--listen", "0.0.0.0:0", "--tls-listen", "none",
         "--admin-listen", "none"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
    )
    assert started.returncode == 2
    assert "--policies" in started.stderr and "SAS_KEY_VALUE" in started.stderr


def test_keys_generate_prints_a_usable_policies_file(tmp_path):
    printed = subprocess.run(
        [busbar_binary(), "keys", "generate", "--name", "ops"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout
    key = printed.splitlines()[0]
    assert len(base64.b64decode(key)) == 32
    assert f"SharedAccessKeyName=ops;SharedAccessKey={key}" in printed
    document = printed[printed.index("{"): printed.rindex("}") + 1]
    rules = json.loads(document)["SharedAccessPolicies"]
    assert rules[0]["KeyName"] == "ops" and rules[0]["PrimaryKey"] == key
