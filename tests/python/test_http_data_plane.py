"""The HTTP data plane against the official Python SDK: a message sent over Service Bus's REST
API (`POST /{queue}/messages` with `BrokerProperties` and custom-property headers) is received
over AMQP with every property intact, and one sent over AMQP is received over HTTP with them.
"""

import datetime
import json
import urllib.request

from azure.servicebus import ServiceBusMessage

from support import body_text, receive_one, sas_token


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
