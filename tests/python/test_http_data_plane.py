"""The HTTP data plane against the official Python SDK: a message sent over Service Bus's REST
API (`POST /{queue}/messages` with `BrokerProperties` and custom-property headers) is received
over AMQP with every property intact, and one sent over AMQP is received over HTTP with them;
a message of megabytes crosses both ways on an entity whose limit allows it, and one past the
limit is refused with 413.
"""

import datetime
import json
import os
import urllib.error
import urllib.request

import pytest
from azure.servicebus import ServiceBusMessage

from support import body_text, receive_one, sas_token
from test_admin import admin_client

MB = 1024 * 1024


def rest(broker, method, path, headers=None, body=b""):
    """A SAS-signed request to the admin port; returns (status, headers, body)."""
    url = f"http://127.0.0.1:{broker.admin_port}{path}"
    request = urllib.request.Request(
        url, data=body, method=method, headers={"Authorization": sas_token(url), **(headers or {})}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.headers, response.read()


def test_a_message_sent_over_http_is_received_over_amqp_with_its_properties(broker, client):
    properties = {
        "MessageId": "http-1",
        "CorrelationId": "corr-1",
        "Label": "orders",
        "To": "someone",
        "ReplyTo": "q-reply",
        "TimeToLive": 600,
    }
    status, _, _ = rest(
        broker,
        "POST",
        "/q-http-to-amqp/messages",
        {
            "Content-Type": "application/json",
            "BrokerProperties": json.dumps(properties),
            "color": '"red"',
            "count": "7",
            "ratio": "0.5",
            "urgent": "true",
        },
        b'{"order": 1}',
    )
    assert status == 201
    with client.get_queue_receiver("q-http-to-amqp") as receiver:
        message = receive_one(receiver)
        assert body_text(message) == '{"order": 1}'
        assert message.message_id == "http-1"
        assert message.correlation_id == "corr-1"
        assert message.subject == "orders"
        assert message.to == "someone"
        assert message.reply_to == "q-reply"
        assert message.content_type == "application/json"
        assert message.time_to_live == datetime.timedelta(seconds=600)
        assert message.delivery_count == 0
        assert message.application_properties == {
            b"color": b"red",
            b"count": 7,
            b"ratio": 0.5,
            b"urgent": True,
        }
        receiver.complete_message(message)


def test_a_message_sent_over_amqp_is_received_over_http_with_its_properties(broker, client):
    with client.get_queue_sender("q-amqp-to-http") as sender:
        sender.send_messages(
            ServiceBusMessage(
                "from amqp",
                message_id="amqp-1",
                correlation_id="corr-2",
                subject="invoices",
                content_type="text/plain",
                time_to_live=datetime.timedelta(minutes=5),
                application_properties={"region": "eu", "attempt": 2},
            )
        )
    status, headers, body = rest(broker, "DELETE", "/q-amqp-to-http/messages/head?timeout=10")
    assert status == 200
    assert body == b"from amqp"
    assert headers["Content-Type"] == "text/plain"
    received = json.loads(headers["BrokerProperties"])
    assert received["MessageId"] == "amqp-1"
    assert received["CorrelationId"] == "corr-2"
    assert received["Label"] == "invoices"
    assert received["TimeToLive"] == 300
    assert received["DeliveryCount"] == 1
    assert received["SequenceNumber"] >= 1
    assert received["EnqueuedTimeUtc"].endswith(" GMT")
    assert headers["region"] == '"eu"'
    assert headers["attempt"] == "2"


def test_messages_of_megabytes_cross_http_within_their_entitys_limit(broker, client):
    with admin_client(broker) as admin:
        admin.create_queue("q-http-large", max_message_size_in_kilobytes=4096)
    sent_over_http = os.urandom(3 * MB)
    headers = {"Content-Type": "application/octet-stream"}
    status, _, _ = rest(broker, "POST", "/q-http-large/messages", headers, sent_over_http)
    assert status == 201
    with client.get_queue_receiver("q-http-large") as receiver:
        message = receive_one(receiver)
        assert b"".join(message.body) == sent_over_http
        receiver.complete_message(message)

    sent_over_amqp = os.urandom(3 * MB)
    with client.get_queue_sender("q-http-large") as sender:
        sender.send_messages(ServiceBusMessage(sent_over_amqp))
    status, _, body = rest(broker, "DELETE", "/q-http-large/messages/head?timeout=10")
    assert (status, len(body)) == (200, len(sent_over_amqp))
    assert body == sent_over_amqp

    # Past the limit, here and on a standard queue's 256 KiB: 413, and nothing is stored.
    for queue, size in [("q-http-large", 4 * MB + 1024), ("q-amqp-to-http", 256 * 1024 + 1024)]:
        with pytest.raises(urllib.error.HTTPError) as refused:
            rest(broker, "POST", f"/{queue}/messages", headers, os.urandom(size))
        assert refused.value.code == 413, queue
        assert rest(broker, "DELETE", f"/{queue}/messages/head?timeout=1")[0] == 204, queue
