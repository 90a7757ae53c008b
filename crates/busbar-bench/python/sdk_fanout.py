"""Topic fan-out send throughput through the official Python SDK (azure-servicebus).

Sends batches of 128 B messages, one batch at a time, to the fan-out topics that
`busbar-bench busbar-config` declares (fanout-1, fanout-10, fanout-100), each message carrying
the application property route='selected' that the even-numbered subscriptions select, and
prints msg/s and copies stored/s per topic. Start the broker first (see BENCHMARKS.md):

    busbar-bench busbar-config > Config.json
    busbar --config Config.json --memory --listen 127.0.0.1:0     # prints "listening on ADDR"
    python sdk_fanout.py --port PORT [--seconds 10] [--batch 100]

Not a test: pytest collects only tests/python.
"""

import argparse
import time

from azure.servicebus import ServiceBusClient, ServiceBusMessage

TOPICS = {"fanout-1": 1, "fanout-10": 10, "fanout-100": 100}
BODY = b"\x5a" * 128


def copies_per_message(subscriptions):
    """The even-numbered subscriptions select each message: ceil(n/2) of n."""
    return (subscriptions + 1) // 2


def send_for(sender, seconds, batch):
    """Sends batches until `seconds` pass; returns (messages accepted, elapsed seconds)."""
    sent = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        messages = [
            ServiceBusMessage(BODY, application_properties={"route": "selected"})
            for _ in range(batch)
        ]
        sender.send_messages(messages)
        sent += batch
    return sent, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    connection = (
        f"Endpoint=sb://localhost:{args.port};SharedAccessKeyName=RootManageSharedAccessKey;"
        "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
    )
    print("| topic | msg/s | copies stored/s |")
    print("|---|--:|--:|")
    with ServiceBusClient.from_connection_string(connection) as client:
        for topic, subscriptions in TOPICS.items():
            with client.get_topic_sender(topic) as sender:
                sender.send_messages(ServiceBusMessage(b"warm-up"))
                sent, elapsed = send_for(sender, args.seconds, args.batch)
            rate = sent / elapsed
            copies = rate * copies_per_message(subscriptions)
            print(f"| {topic} | {rate:.0f} | {copies:.0f} |", flush=True)


if __name__ == "__main__":
    main()
