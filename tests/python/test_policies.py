"""Shared-access policies (`--policies`) through the official SDK: each key's rights are enforced
on its links, on the administration API, the HTTP data plane and the explorer's API; either key
of a rule signs; a re-read of the policies file (SIGHUP) rotates keys without a restart; and the
emulator's published key is refused."""

import base64
import json
import os
import secrets
import signal
import subprocess
import urllib.error
import urllib.request

import pytest
from azure.core.exceptions import ClientAuthenticationError
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.exceptions import (
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusError,
)
from azure.servicebus.management import AuthorizationRule, ServiceBusAdministrationClient

from conftest import Broker, QUEUES, _serving, busbar_binary
from support import api, body_text, receive_one, sas_token, strict_client

QUEUE = "q-send-receive"


def fresh_key():
    return base64.b64encode(secrets.token_bytes(32)).decode()


KEYS = {
    "RootManageSharedAccessKey": fresh_key(),
    "sender": fresh_key(),
    "listener": fresh_key(),
    "listener-secondary": fresh_key(),
}


def policies(keys=KEYS):
    return {
        "SharedAccessPolicies": [
            {
                "KeyName": "RootManageSharedAccessKey",
                "PrimaryKey": keys["RootManageSharedAccessKey"],
                "Rights": ["Manage", "Send", "Listen"],
            },
            {"KeyName": "sender", "PrimaryKey": keys["sender"], "Rights": ["Send"]},
            {
                "KeyName": "listener",
                "PrimaryKey": keys["listener"],
                "SecondaryKey": keys["listener-secondary"],
                "Rights": ["Listen"],
            },
        ]
    }


def secured_broker(workdir):
    """A broker with `policies()` in `workdir/policies.json`."""
    path = workdir / "policies.json"
    path.write_text(json.dumps(policies()))
    broker = Broker(busbar_binary(), workdir, QUEUES, extra_args=["--policies", str(path)])
    broker.start()
    yield from _serving(broker)


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    yield from secured_broker(tmp_path_factory.mktemp("policies"))


@pytest.fixture
def own_broker(tmp_path):
    """A broker of its own, which the test may restart or whose policies file it may rewrite."""
    yield from secured_broker(tmp_path)


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


def admin(broker, name, key):
    """The SDK's admin client on the broker's admin port, over plain HTTP (as test_admin.py)."""
    client = ServiceBusAdministrationClient.from_connection_string(
        f"Endpoint=sb://localhost:{broker.admin_port};SharedAccessKeyName={name};"
        f"SharedAccessKey={key};UseDevelopmentEmulator=true;"
    )
    client._impl._client._base_url = f"http://localhost:{broker.admin_port}"
    return client


def rest(broker, name, method, path):
    """A data-plane request signed with `name`'s key; returns (status, body text)."""
    url = f"http://127.0.0.1:{broker.admin_port}{path}"
    token = sas_token(url, key=KEYS[name], key_name=name)
    request = urllib.request.Request(
        url, data=b"over http", method=method, headers={"Authorization": token}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_admin_api_and_the_explorer_need_manage_and_the_data_plane_its_claims(secured):
    with admin(secured, "listener", KEYS["listener"]) as client:
        with pytest.raises(ClientAuthenticationError) as refused:
            client.get_queue(QUEUE)
    assert "Manage,EntityRead claims required for this operation" in str(refused.value)
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        assert client.get_queue(QUEUE).name == QUEUE
    assert api(secured, "GET", "/$busbar/api/namespace", key_name="listener",
               key=KEYS["listener"])[0] == 401
    assert rest(secured, "sender", "POST", f"/{QUEUE}/messages")[0] == 201
    # Refused before the entity is looked up: a queue that does not exist is not revealed.
    for path in (f"/{QUEUE}/messages/head", "/no-such-queue/messages/head"):
        status, body = rest(secured, "sender", "DELETE", path)
        assert status == 401 and "'Listen' claim(s) are required" in body, body
    status, body = rest(secured, "listener", "DELETE", f"/{QUEUE}/messages/head")
    assert (status, body) == (200, "over http")
    assert rest(secured, "listener", "POST", f"/{QUEUE}/messages")[0] == 401


def test_an_entity_rule_made_by_the_admin_client_works_on_its_queue_only(secured):
    primary, secondary = fresh_key(), fresh_key()
    rule = AuthorizationRule(
        type="SharedAccessAuthorizationRule", claim_type="SharedAccessKey", claim_value="None",
        rights=["Send", "Listen"], key_name="orders-app", primary_key=primary,
        secondary_key=secondary,
    )
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_queue("q-entity-rule", authorization_rules=[rule])
        (read,) = client.get_queue("q-entity-rule").authorization_rules
    assert (read.key_name, read.primary_key, read.secondary_key) == ("orders-app", primary, secondary)
    assert sorted(read.rights) == ["Listen", "Send"]
    own = conn(secured, "orders-app", secondary) + "EntityPath=q-entity-rule;"
    with strict_client(own) as client:
        client.get_queue_sender("q-entity-rule").send_messages(ServiceBusMessage("entity key"))
        with client.get_queue_receiver("q-entity-rule", max_wait_time=5) as receiver:
            message = receive_one(receiver)
            assert body_text(message) == "entity key"
            receiver.complete_message(message)
    # Its key is no namespace key: another queue refuses it.
    assert_refused_elsewhere(secured, "orders-app", primary)


def assert_refused_elsewhere(broker, name, key):
    """An entity rule's key is refused on the namespace's other queues."""
    with strict_client(conn(broker, name, key)) as client:
        with pytest.raises(ServiceBusAuthenticationError):
            client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("no"))


def test_a_topic_rule_covers_its_subscriptions_and_their_dead_letter_queues(secured):
    key = fresh_key()
    rule = AuthorizationRule(key_name="billing-app", primary_key=key, rights=["Send", "Listen"])
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_topic("t-entity-rule", authorization_rules=[rule])
        client.create_subscription("t-entity-rule", "audit")
    own = conn(secured, "billing-app", key) + "EntityPath=t-entity-rule;"
    with strict_client(own) as client:
        client.get_topic_sender("t-entity-rule").send_messages(ServiceBusMessage("for audit"))
        with client.get_subscription_receiver("t-entity-rule", "audit", max_wait_time=5) as receiver:
            receiver.dead_letter_message(receive_one(receiver), reason="checked")
        with client.get_subscription_receiver(
            "t-entity-rule", "audit", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5
        ) as dead_letters:
            message = receive_one(dead_letters)
            assert body_text(message) == "for audit"
            assert message.dead_letter_reason == "checked"
            dead_letters.complete_message(message)
    assert_refused_elsewhere(secured, "billing-app", key)


def test_an_entity_rule_survives_a_restart(own_broker):
    key = fresh_key()
    rule = AuthorizationRule(key_name="kept", primary_key=key, rights=["Send"])
    with admin(own_broker, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_queue("q-kept-rule", authorization_rules=[rule])
    own_broker.stop()
    own_broker.start()
    with strict_client(conn(own_broker, "kept", key) + "EntityPath=q-kept-rule;") as client:
        client.get_queue_sender("q-kept-rule").send_messages(ServiceBusMessage("after a restart"))


def test_rotation_and_removal_take_effect_without_a_restart(own_broker):
    old = KEYS["listener"]
    with strict_client(conn(own_broker, "sender", KEYS["sender"])) as client:
        client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage("before"))
    # The listener's primary key is replaced, the sender's rule removed.
    rotated = dict(KEYS, listener=fresh_key())
    document = policies(rotated)
    document["SharedAccessPolicies"] = [
        rule for rule in document["SharedAccessPolicies"] if rule["KeyName"] != "sender"
    ]
    (own_broker.workdir / "policies.json").write_text(json.dumps(document))
    own_broker.process.send_signal(signal.SIGHUP)
    own_broker._await_line(lambda line: "policies re-read" in line or None, "the re-read line")
    for name, key in (("sender", KEYS["sender"]), ("listener", old)):
        with strict_client(conn(own_broker, name, key)) as client:
            with pytest.raises(ServiceBusAuthenticationError):
                client.get_queue_receiver(QUEUE, max_wait_time=2).receive_messages()
    # The secondary key survives the primary's rotation; the new primary signs at once.
    for key in (KEYS["listener-secondary"], rotated["listener"]):
        with strict_client(conn(own_broker, "listener", key)) as client:
            with client.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
                assert receiver.peek_messages(max_message_count=1)


def entity_rule(key_name, rights, primary=""):
    return AuthorizationRule(key_name=key_name, primary_key=primary, rights=rights)


def test_a_rule_sent_without_keys_gets_generated_ones_that_sign(secured):
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_queue("q-generated-keys", authorization_rules=[entity_rule("gen", ["Send"])])
        (read,) = client.get_queue("q-generated-keys").authorization_rules
    assert read.key_name == "gen" and read.primary_key != read.secondary_key
    for key in (read.primary_key, read.secondary_key):
        assert len(base64.b64decode(key)) == 32
        with strict_client(conn(secured, "gen", key) + "EntityPath=q-generated-keys;") as client:
            client.get_queue_sender("q-generated-keys").send_messages(ServiceBusMessage("generated"))


def entity_rest(broker, key_name, key, method, path, signed_for=None):
    """A request signed with an entity rule's key (for `signed_for`, by default the URL)."""
    url = f"http://127.0.0.1:{broker.admin_port}{path}"
    token = sas_token(signed_for or url, key=key, key_name=key_name)
    request = urllib.request.Request(
        url, data=b"entity key", method=method, headers={"Authorization": token}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_an_entity_key_works_over_http_on_its_entity_only(secured):
    key = fresh_key()
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_queue("q-http-rule", authorization_rules=[
            entity_rule("http-app", ["Send", "Listen"], key)])
    assert entity_rest(secured, "http-app", key, "POST", "/q-http-rule/messages")[0] == 201
    status, body = entity_rest(secured, "http-app", key, "DELETE", "/q-http-rule/messages/head")
    assert (status, body) == (200, "entity key")
    # Another queue, or a token signed for another entity, is refused (401) before existence.
    for path, signed_for in (
        (f"/{QUEUE}/messages", None),
        ("/no-such-queue/messages", None),
        ("/q-http-rule/messages", f"sb://localhost/{QUEUE}"),
    ):
        assert entity_rest(secured, "http-app", key, "POST", path, signed_for)[0] == 401, path


def test_an_entity_manage_key_administers_its_entity_only(secured):
    manage, listen = fresh_key(), fresh_key()
    with admin(secured, "RootManageSharedAccessKey", KEYS["RootManageSharedAccessKey"]) as client:
        client.create_queue("q-managed-rule", authorization_rules=[
            entity_rule("owner", ["Manage", "Send", "Listen"], manage),
            entity_rule("reader", ["Listen"], listen),
        ])
    with admin(secured, "owner", manage) as client:
        queue = client.get_queue("q-managed-rule")
        queue.max_delivery_count = 7
        client.update_queue(queue)
        assert client.get_queue("q-managed-rule").max_delivery_count == 7
        for refused in (
            lambda: client.get_queue(QUEUE),
            lambda: client.create_queue("q-not-the-owner-s"),
            lambda: client.delete_queue("q-managed-rule"),
            lambda: list(client.list_queues()),
        ):
            with pytest.raises(ClientAuthenticationError):
                refused()
    with admin(secured, "reader", listen) as client:
        with pytest.raises(ClientAuthenticationError) as refused:
            client.get_queue("q-managed-rule")
    assert "Manage,EntityRead claims required" in str(refused.value)


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
