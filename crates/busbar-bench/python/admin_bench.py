"""The administration API's cost, through the official Python admin client (azure-servicebus).

Two figures: the time per durable queue create over N creates (each answered only once its
definition is synced), and the time to read the runtime properties of a queue that holds M
messages (the counts are O(1) in the broker, so this must not grow with M). The messages are
sent over AMQP in batches first. Start the broker first (see BENCHMARKS.md):

    busbar --data-dir DIR --listen 127.0.0.1:0 --tls-listen none --admin-listen 127.0.0.1:0
    python admin_bench.py --port AMQP_PORT --admin-port ADMIN_PORT [--creates 1000] [--messages 1000000]

Times are what the client sees (HTTP round trip, XML on both sides, the durable sync for
creates), with the client on the same machine. Not a test: pytest collects only tests/python.
"""

import argparse
import statistics
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.management import ServiceBusAdministrationClient

KEY = "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE"
BATCH = 2000
READS = 200


def connection_string(port):
    return f"Endpoint=sb://localhost:{port};{KEY};UseDevelopmentEmulator=true;"


def admin_client(port):
    """The admin client over plain HTTP (the emulator sample's workaround)."""
    client = ServiceBusAdministrationClient.from_connection_string(connection_string(port))
    client._impl._client._base_url = f"http://localhost:{port}"
    return client


def summary(samples_ms):
    ordered = sorted(samples_ms)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered):.2f} ms, p99 {p99:.2f} ms, max {ordered[-1]:.2f} ms"


def timed(call):
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--admin-port", type=int, required=True)
    parser.add_argument("--creates", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    args = parser.parse_args()

    with admin_client(args.admin_port) as admin:
        started = time.perf_counter()
        creates = [
            timed(lambda i=i: admin.create_queue(f"bench-{i:05}")) for i in range(args.creates)
        ]
        elapsed = time.perf_counter() - started
        print(f"create queue x{args.creates}: {elapsed:.2f} s in all, {summary(creates)}")

        admin.create_queue("bench-backlog", max_size_in_megabytes=5120)
        empty = [
            timed(lambda: admin.get_queue_runtime_properties("bench-backlog"))
            for _ in range(READS)
        ]
        print(f"runtime properties, empty queue: {summary(empty)}")

    with ServiceBusClient.from_connection_string(connection_string(args.port)) as client:
        with client.get_queue_sender("bench-backlog") as sender:
            started = time.perf_counter()
            for sent in range(0, args.messages, BATCH):
                count = min(BATCH, args.messages - sent)
                sender.send_messages([ServiceBusMessage(b"m") for _ in range(count)])
            print(f"sent {args.messages} messages in {time.perf_counter() - started:.1f} s")

    with admin_client(args.admin_port) as admin:
        properties = admin.get_queue_runtime_properties("bench-backlog")
        assert properties.active_message_count == args.messages, properties.active_message_count
        full = [
            timed(lambda: admin.get_queue_runtime_properties("bench-backlog"))
            for _ in range(READS)
        ]
        print(f"runtime properties, {args.messages} messages: {summary(full)}")


if __name__ == "__main__":
    main()
