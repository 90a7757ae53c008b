"""Interop client for busbar-amqp's test node, using python-qpid-proton (an independent AMQP 1.0
stack). Usage: proton_client.py HOST:PORT. Exits non-zero on the first failed check."""

import sys

from proton import Message
from proton.utils import BlockingConnection

address = sys.argv[1]
url = f"amqp://{address}"
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    checks += 1


# SASL ANONYMOUS; send two messages, one far above the node's max-frame-size.
conn = BlockingConnection(url, timeout=10, allowed_mechs="ANONYMOUS")
sender = conn.create_sender("proton-q")
big = "y" * 200_000
sender.send(Message(body="hello"))
sender.send(Message(body=big))

receiver = conn.create_receiver("proton-q", credit=10)
first = receiver.receive(timeout=10)
check(first.body == "hello", "first message body")
receiver.accept()
second = receiver.receive(timeout=10)
check(second.body == big, "large message body, reassembled")
receiver.accept()

# Drain with nothing queued: the node must answer with link-credit 0 and drain=true.
link = receiver.link
link.drain(5)
conn.wait(lambda: not link.draining(), msg="drain answered", timeout=10)
check(link.credit == 0, "credit consumed by the drain")

receiver.close()
sender.close()
conn.close()

# SASL PLAIN (over plain TCP, so insecure mechanisms must be allowed explicitly).
conn = BlockingConnection(
    url, timeout=10, user="alice", password="secret", allowed_mechs="PLAIN", allow_insecure_mechs=True
)
sender = conn.create_sender("proton-plain")
sender.send(Message(body={"k": 1}))
receiver = conn.create_receiver("proton-plain", credit=1)
message = receiver.receive(timeout=10)
check(message.body == {"k": 1}, "map body over PLAIN")
receiver.accept()
conn.close()

print(f"{checks} passed, 0 failed", flush=True)
