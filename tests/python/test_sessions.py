"""Message sessions through the official SDK: session ids required on send, session receivers
(named and next available), per-session FIFO, exclusive session locks, release on close, lock
expiry, abandon. Every queue here has `RequiresSession`.
"""

import pytest
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusClient, ServiceBusMessage
from azure.servicebus.exceptions import (
    OperationTimeoutError,
    ServiceBusError,
    SessionCannotBeLockedError,
)

from support import bodies, body_text, receive_exactly, receive_one


@pytest.fixture
def single_try_client(broker):
    """A client that does not retry, for refusals the SDK would otherwise retry with backoff."""
    with ServiceBusClient.from_connection_string(
        broker.connection_string, retry_total=0
    ) as sb_client:
        yield sb_client


def send_to_sessions(client, queue_name, pairs):
    """Sends `(session id, body)` pairs in the order given."""
    with client.get_queue_sender(queue_name) as sender:
        sender.send_messages(
            [ServiceBusMessage(body, session_id=session) for session, body in pairs]
        )


def test_a_message_without_session_id_is_refused(client):
    with client.get_queue_sender("q-session-plain") as sender:
        with pytest.raises(ServiceBusError) as refused:
            sender.send_messages(ServiceBusMessage("no-session"))
        assert "SessionId" in str(refused.value)


def test_a_plain_receiver_cannot_attach_to_a_session_queue(client):
    send_to_sessions(client, "q-session-plain", [("s", "one")])
    with pytest.raises(ServiceBusError):
        with client.get_queue_receiver("q-session-plain", max_wait_time=5) as receiver:
            receiver.receive_messages(max_wait_time=5)


def test_each_session_is_delivered_in_order_while_sessions_interleave(client):
    pairs = [(f"s-{n % 3}", f"{n % 3}:{n // 3}") for n in range(12)]
    send_to_sessions(client, "q-session-fifo", pairs)
    for session in range(3):
        with client.get_queue_receiver(
            "q-session-fifo", session_id=f"s-{session}"
        ) as receiver:
            assert receiver.session.session_id == f"s-{session}"
            received = receive_exactly(receiver, 4)
            assert bodies(received) == [f"{session}:{k}" for k in range(4)]
            for message in received:
                assert message.session_id == f"s-{session}"
                receiver.complete_message(message)


def test_two_next_available_receivers_get_different_sessions(client):
    send_to_sessions(client, "q-session-two", [("a", "a1"), ("b", "b1")])
    with client.get_queue_receiver(
        "q-session-two", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=10
    ) as first, client.get_queue_receiver(
        "q-session-two", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=10
    ) as second:
        sessions = {first.session.session_id, second.session.session_id}
        assert sessions == {"a", "b"}
        for receiver in (first, second):
            message = receive_one(receiver)
            assert body_text(message) == receiver.session.session_id + "1"
            receiver.complete_message(message)


def test_a_named_session_held_by_another_receiver_is_refused(client, single_try_client):
    send_to_sessions(client, "q-session-busy", [("held", "x")])
    with client.get_queue_receiver("q-session-busy", session_id="held") as holder:
        assert body_text(receive_one(holder)) == "x"
        with pytest.raises(SessionCannotBeLockedError):
            with single_try_client.get_queue_receiver(
                "q-session-busy", session_id="held", max_wait_time=5
            ) as rival:
                rival.receive_messages(max_wait_time=1)


def test_next_available_with_no_free_session_times_out(single_try_client):
    with pytest.raises(OperationTimeoutError):
        with single_try_client.get_queue_receiver(
            "q-session-empty", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=2
        ) as receiver:
            receiver.receive_messages(max_wait_time=1)


def test_abandon_serves_the_same_message_again(client):
    send_to_sessions(client, "q-session-abandon", [("s", "first"), ("s", "second")])
    with client.get_queue_receiver("q-session-abandon", session_id="s") as receiver:
        first = receive_one(receiver)
        assert body_text(first) == "first"
        receiver.abandon_message(first)
        again = receive_one(receiver)
        assert body_text(again) == "first"
        assert again.delivery_count == 1
        receiver.complete_message(again)
        assert body_text(receive_one(receiver)) == "second"


def test_closing_a_session_receiver_releases_the_session_uncounted(client):
    send_to_sessions(client, "q-session-close", [("s", "kept")])
    with client.get_queue_receiver("q-session-close", session_id="s") as receiver:
        assert body_text(receive_one(receiver)) == "kept"
    with client.get_queue_receiver(
        "q-session-close", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=10
    ) as receiver:
        assert receiver.session.session_id == "s"
        message = receive_one(receiver)
        assert body_text(message) == "kept"
        assert message.delivery_count == 0
        receiver.complete_message(message)


def test_lock_expiry_lets_a_waiting_receiver_in_and_counts_a_delivery(client):
    send_to_sessions(client, "q-session-expiry", [("s", "slow")])
    with client.get_queue_receiver("q-session-expiry", session_id="s") as holder:
        assert body_text(receive_one(holder)) == "slow"
        # Nothing renews the 5 s session lock: the waiting receiver gets the session when it
        # expires, with the in-flight message counted as delivered once.
        with client.get_queue_receiver(
            "q-session-expiry", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=20
        ) as successor:
            assert successor.session.session_id == "s"
            message = receive_one(successor)
            assert body_text(message) == "slow"
            assert message.delivery_count == 1
            successor.complete_message(message)


def test_session_state_is_set_read_and_cleared(client):
    send_to_sessions(client, "q-session-state", [("s", "m")])
    with client.get_queue_receiver("q-session-state", session_id="s") as receiver:
        assert receiver.session.get_state() is None
        receiver.session.set_state(b"step-1")
        assert receiver.session.get_state() == b"step-1"
        receiver.session.set_state(None)
        assert receiver.session.get_state() is None


def test_session_state_survives_a_restart_after_the_messages_are_gone(own_broker):
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as sb_client:
        send_to_sessions(sb_client, "q-session-state", [("kept", "m")])
        with sb_client.get_queue_receiver("q-session-state", session_id="kept") as receiver:
            receiver.complete_message(receive_one(receiver))
            receiver.session.set_state(b"\x00checkpoint\xff")
    own_broker.restart()
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as sb_client:
        with sb_client.get_queue_receiver("q-session-state", session_id="kept") as receiver:
            assert receiver.session.get_state() == b"\x00checkpoint\xff"


def test_renewing_the_session_lock_extends_it(client):
    send_to_sessions(client, "q-session-renew", [("s", "m")])
    with client.get_queue_receiver("q-session-renew", session_id="s") as receiver:
        first = receiver.session.locked_until_utc
        message = receive_one(receiver)
        renewed = receiver.session.renew_lock()
        assert renewed >= first
        assert receiver.session.locked_until_utc == renewed
        receiver.complete_message(message)


def test_request_response_through_reply_to_session_id(client):
    with client.get_queue_sender("q-session-requests") as sender:
        sender.send_messages(
            ServiceBusMessage("ping", session_id="work", reply_to_session_id="caller-7")
        )
    with client.get_queue_receiver("q-session-requests", session_id="work") as responder:
        request = receive_one(responder)
        assert request.reply_to_session_id == "caller-7"
        with client.get_queue_sender("q-session-replies") as sender:
            sender.send_messages(
                ServiceBusMessage("pong", session_id=request.reply_to_session_id)
            )
        responder.complete_message(request)
    with client.get_queue_receiver("q-session-replies", session_id="caller-7") as requester:
        reply = receive_one(requester)
        assert body_text(reply) == "pong"
        requester.complete_message(reply)


def test_a_session_receiver_peeks_and_receives_deferred_messages_of_its_session(client):
    send_to_sessions(client, "q-session-defer", [("a", "a1"), ("b", "b1"), ("a", "a2")])
    with client.get_queue_receiver("q-session-defer", session_id="a") as receiver:
        assert bodies(receiver.peek_messages(max_message_count=10)) == ["a1", "a2"]
        first = receive_one(receiver)
        assert body_text(first) == "a1"
        receiver.defer_message(first)
        (deferred,) = receiver.receive_deferred_messages([first.sequence_number])
        assert body_text(deferred) == "a1"
        receiver.complete_message(deferred)
        second = receive_one(receiver)
        assert body_text(second) == "a2"
        receiver.complete_message(second)


def test_listing_sessions_shows_those_with_messages_or_state(client):
    assert list(client.list_queue_sessions("q-session-list")) == []
    send_to_sessions(client, "q-session-list", [("orders", "o1"), ("billing", "b1")])
    assert sorted(client.list_queue_sessions("q-session-list")) == ["billing", "orders"]
    with client.get_queue_receiver("q-session-list", session_id="billing") as receiver:
        receiver.session.set_state(b"checkpoint")
        receiver.complete_message(receive_one(receiver))
    with client.get_queue_receiver("q-session-list", session_id="orders") as receiver:
        receiver.complete_message(receive_one(receiver))
    # "billing" has no messages left but keeps its state; "orders" has neither.
    assert list(client.list_queue_sessions("q-session-list")) == ["billing"]


def test_a_session_receiver_cannot_attach_to_a_queue_without_sessions(single_try_client):
    with pytest.raises(ServiceBusError):
        with single_try_client.get_queue_receiver(
            "q-sessions-disabled", session_id="s", max_wait_time=5
        ) as receiver:
            receiver.receive_messages(max_wait_time=1)
