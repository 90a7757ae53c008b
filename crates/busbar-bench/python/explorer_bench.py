"""The web explorer's and the scrape's cost with a large namespace and a deep queue.

    python explorer_bench.py config --entities 10000 > Config.json
    busbar --config Config.json --memory --listen 127.0.0.1:0 --tls-listen none --admin-listen 127.0.0.1:0
    python explorer_bench.py measure --port AMQP_PORT --admin-port ADMIN_PORT [--messages 1000000]

`config` writes a namespace of N queues (one of them, `bench-backlog`, with a 5 GiB quota).
`measure` times, over plain HTTP on loopback: `GET /metrics` (OpenMetrics), the overview page
(`/explorer`: every entity's counts asked, the first 500 rows rendered), the live-count JSON
of all entities, and an entity's page (50 messages peeked) for an empty queue and for one
holding M messages (sent first through the Python SDK), at its start and at its end. Times are
the client's (request to last byte), median and p99. Not a test: pytest collects only
tests/python.
"""

import argparse
import http.cookiejar
import json
import statistics
import sys
import time
import urllib.parse
import urllib.request

from azure.servicebus import ServiceBusClient, ServiceBusMessage

KEY_NAME = "RootManageSharedAccessKey"
KEY = "SAS_KEY_VALUE"
BATCH = 2000
BACKLOG = "bench-backlog"


def config(entities):
    queues = [{"Name": f"bench-q{i:05}", "Properties": {}} for i in range(entities - 1)]
    queues.append({"Name": BACKLOG, "Properties": {"MaxSizeInMegabytes": 5120}})
    namespace = {"Name": "sbemulatorns", "Queues": queues, "Topics": []}
    return {"UserConfig": {"Namespaces": [namespace], "Logging": {"Type": "Console"}}}


def summary(samples_ms):
    ordered = sorted(samples_ms)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms"


def timed_gets(opener, url, samples):
    times = []
    size = 0
    for _ in range(samples):
        started = time.perf_counter()
        with opener.open(url, timeout=120) as response:
            size = len(response.read())
        times.append((time.perf_counter() - started) * 1000)
    return f"{summary(times)} ({size / 1024:.0f} KiB)"


def measure(args):
    base = f"http://127.0.0.1:{args.admin_port}"
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    form = urllib.parse.urlencode({"key_name": KEY_NAME, "key": KEY}).encode()
    opener.open(f"{base}/explorer/sign-in", data=form, timeout=30).read()
    with opener.open(f"{base}/explorer/counts?top=1000000", timeout=120) as response:
        entities = len(json.load(response)["entities"])
    print(f"namespace: {entities} entities")
    rows = [
        ("GET /metrics", f"{base}/metrics"),
        ("overview page /explorer", f"{base}/explorer"),
        ("live counts JSON, all entities", f"{base}/explorer/counts?top=1000000"),
        ("entity page, empty queue", f"{base}/explorer/entity?path=bench-q00000"),
    ]
    for name, url in rows:
        print(f"{name}: {timed_gets(opener, url, args.samples)}")

    connection = f"Endpoint=sb://localhost:{args.port};SharedAccessKeyName={KEY_NAME};SharedAccessKey={KEY};UseDevelopmentEmulator=true;"
    with ServiceBusClient.from_connection_string(connection) as client:
        with client.get_queue_sender(BACKLOG) as sender:
            started = time.perf_counter()
            for sent in range(0, args.messages, BATCH):
                count = min(BATCH, args.messages - sent)
                sender.send_messages([ServiceBusMessage(b"m") for _ in range(count)])
            print(f"sent {args.messages} messages in {time.perf_counter() - started:.1f} s")
    last = max(1, args.messages - 49)
    for name, url in [
        (f"entity page, {args.messages} messages, first page", f"{base}/explorer/entity?path={BACKLOG}"),
        (f"entity page, {args.messages} messages, last page", f"{base}/explorer/entity?path={BACKLOG}&from={last}"),
        ("message page in that queue", f"{base}/explorer/message?path={BACKLOG}&seq={last}"),
        (f"GET /metrics after the backlog", f"{base}/metrics"),
    ]:
        print(f"{name}: {timed_gets(opener, url, args.samples)}")


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("config")
    writing.add_argument("--entities", type=int, default=10_000)
    measuring = commands.add_parser("measure")
    measuring.add_argument("--port", type=int, required=True)
    measuring.add_argument("--admin-port", type=int, required=True)
    measuring.add_argument("--messages", type=int, default=1_000_000)
    measuring.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    if args.command == "config":
        json.dump(config(args.entities), sys.stdout)
    else:
        measure(args)


if __name__ == "__main__":
    main()
