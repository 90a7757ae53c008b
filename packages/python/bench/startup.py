"""Time to a usable broker from the test kit: `Broker()` (process start, then its listening
lines) until the broker has accepted the first message, N times; prints the median and p95.

The message goes through the HTTP data plane (one request, answered 201 once the message is
stored), so the figure is the broker's and not a client library's connection set-up; with
`--sdk` a second series sends it with azure-servicebus instead (connection, CBS token, link).

    python bench/startup.py [--runs N] [--sdk]      # the wheel installed, or BUSBAR_BIN set
"""

import argparse
import statistics
import time

from busbar.testing import Broker


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def send_http(broker):
    broker.controls.request("POST", "/queue.1/messages", b"first", "text/plain")


def send_sdk(broker):
    from azure.servicebus import ServiceBusMessage

    with broker.client() as client:
        client.get_queue_sender("queue.1").send_messages(ServiceBusMessage("first"))


def series(send, runs):
    ready, accepted = [], []
    for _ in range(runs):
        started = time.perf_counter()
        broker = Broker()
        listening = time.perf_counter()
        send(broker)
        done = time.perf_counter()
        broker.stop()
        ready.append((listening - started) * 1000)
        accepted.append((done - started) * 1000)
    return ready, accepted


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--sdk", action="store_true")
    options = parser.parse_args()
    kinds = [("http", send_http)] + ([("sdk", send_sdk)] if options.sdk else [])
    for name, send in kinds:
        ready, accepted = series(send, options.runs)
        for what, values in (("ready", ready), (f"first message accepted ({name})", accepted)):
            print(f"{what}: median {statistics.median(values):.1f} ms, "
                  f"p95 {percentile(values, 0.95):.1f} ms, max {max(values):.1f} ms "
                  f"over {options.runs} runs")


if __name__ == "__main__":
    main()
