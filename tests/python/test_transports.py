"""Every way Service Bus is reached, with the official Python SDK (7.15) unchanged: a
production-style connection string (no `UseDevelopmentEmulator`), the broker's development CA
trusted (`connection_verify`), and `custom_endpoint_address` pointing the client at Busbar's
port, as the SDK documents for endpoints behind a gateway.

- AMQPS: AMQP over TLS on the `--tls-listen` port.
- AMQP over WebSockets (`TransportType.AmqpOverWebsocket`): `wss://…/$servicebus/websocket`.
- One port for everything: plain AMQP (the emulator's string), AMQPS, WebSockets and the admin
  client's https all reach the same port, which tells them apart by their first bytes.
"""

from azure.servicebus import ServiceBusClient, ServiceBusMessage, TransportType
from azure.servicebus.management import ServiceBusAdministrationClient

from support import connection_string

PRODUCTION = (
    "Endpoint=sb://localhost/;SharedAccessKeyName=RootManageSharedAccessKey;"
    "SharedAccessKey=SAS_KEY_VALUE"
)


def production_client(broker, port, transport_type):
    """A client with the production-style string, reaching `port` over `transport_type`."""
    scheme = "https" if transport_type == TransportType.AmqpOverWebsocket else "sb"
    return ServiceBusClient.from_connection_string(
        PRODUCTION,
        transport_type=transport_type,
        custom_endpoint_address=f"{scheme}://localhost:{port}",
        connection_verify=broker.admin_ca,
    )


def round_trip(client, queue, body):
    """Sends `body`, receives it with a peek-lock, completes it, and checks the queue is empty:
    the received bodies."""
    with client.get_queue_sender(queue) as sender:
        sender.send_messages(ServiceBusMessage(body, application_properties={"via": body}))
    with client.get_queue_receiver(queue, max_wait_time=5) as receiver:
        received = receiver.receive_messages(max_message_count=10, max_wait_time=10)
        for message in received:
            assert message.application_properties[b"via"] == body.encode()
            receiver.complete_message(message)
        assert receiver.peek_messages(max_message_count=10) == []
    return [str(message) for message in received]


def test_amqps_with_a_production_connection_string(broker):
    with production_client(broker, broker.amqps_port, TransportType.Amqp) as client:
        assert round_trip(client, "q-amqps", "over tls") == ["over tls"]


def test_amqp_over_websockets_with_tls(broker):
    transport = TransportType.AmqpOverWebsocket
    with production_client(broker, broker.admin_port, transport) as client:
        assert round_trip(client, "q-websocket", "over a websocket") == ["over a websocket"]


def test_one_port_serves_amqp_amqps_websockets_and_the_admin_api(broker):
    port = broker.amqps_port
    with ServiceBusClient.from_connection_string(connection_string(port)) as plain:
        assert round_trip(plain, "q-one-port", "plain amqp") == ["plain amqp"]
    with production_client(broker, port, TransportType.Amqp) as secure:
        assert round_trip(secure, "q-one-port", "amqps") == ["amqps"]
    with production_client(broker, port, TransportType.AmqpOverWebsocket) as websocket:
        assert round_trip(websocket, "q-one-port", "websocket") == ["websocket"]
    admin = ServiceBusAdministrationClient.from_connection_string(
        connection_string(port), connection_verify=broker.admin_ca
    )
    with admin:
        runtime = admin.get_queue_runtime_properties("q-one-port")
    assert runtime.total_message_count == 0
