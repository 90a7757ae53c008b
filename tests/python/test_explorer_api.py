"""Busbar's JSON API under `/$busbar/api/` (docs/explorer-api.md), the explorer's back end,
with the official SDK on the other side: counts, peek paged by sequence number, send (with a
schedule and a session), re-drive from the dead-letter queue to another queue and back (each
message leaving it once its copy is stored), purge without `--test-controls`, and a session's
state seen and set while no receiver holds it."""

import time

from azure.servicebus import ServiceBusMessage, ServiceBusSubQueue

from support import api, bodies, peek_all, receive_exactly

QUEUE = "q-api"


def counts(broker, path):
    status, answer = api(broker, "GET", "/$busbar/api/namespace")
    assert status == 200
    (row,) = [entity for entity in answer["entities"] if entity["path"] == path]
    return row["active"], row["deadLetter"], row["scheduled"]


def test_deferred_messages_are_counted_among_the_active_and_on_their_own(broker, client):
    with client.get_queue_sender(QUEUE) as sender:
        sender.send_messages([ServiceBusMessage(text) for text in ("later", "now")])
    with client.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
        first, _ = receive_exactly(receiver, 2)
        receiver.defer_message(first)
        status, answer = api(broker, "GET", "/$busbar/api/namespace")
        assert status == 200
        (row,) = [entity for entity in answer["entities"] if entity["path"] == QUEUE]
        assert (row["active"], row["deferred"]) == (2, 1)
    api(broker, "POST", f"/$busbar/api/purge/{QUEUE}")


def test_peek_pages_by_sequence_number(broker, client):
    with client.get_queue_sender(QUEUE) as sender:
        sender.send_messages([ServiceBusMessage(f"m{i}", subject="page") for i in range(3)])
    status, first = api(broker, "GET", f"/$busbar/api/messages/{QUEUE}?count=2")
    assert status == 200
    assert [m["body"] for m in first["messages"]] == ["m0", "m1"]
    assert ["subject", "page"] in first["messages"][0]["systemProperties"]
    status, rest = api(broker, "GET", f"/$busbar/api/messages/{QUEUE}?from={first['nextFrom']}")
    assert [m["body"] for m in rest["messages"]] == ["m2"]
    assert rest["nextFrom"] is None
    assert api(broker, "POST", f"/$busbar/api/purge/{QUEUE}") == (200, {"purged": 3})
    assert counts(broker, QUEUE) == (0, 0, 0)


def test_redrive_moves_dead_letters_to_another_queue_and_back(broker, client):
    with client.get_queue_sender(QUEUE) as sender:
        sender.send_messages([ServiceBusMessage(text) for text in ("a", "b")])
    with client.get_queue_receiver(QUEUE, max_wait_time=5) as receiver:
        for message in receive_exactly(receiver, 2):
            receiver.dead_letter_message(message, reason="bad", error_description="test")
    status, dead = api(broker, "GET", f"/$busbar/api/messages/{QUEUE}?subQueue=dead-letter")
    assert status == 200
    assert [m["deadLetterReason"] for m in dead["messages"]] == ["bad", "bad"]
    first = dead["messages"][0]["sequenceNumber"]

    body = {"sequenceNumbers": [first], "destination": "q-api-other"}
    assert api(broker, "POST", f"/$busbar/api/redrive/{QUEUE}", body) == (
        200,
        {"moved": 1, "kept": 0},
    )
    assert bodies(peek_all(client, "q-api-other")) == ["a"]
    assert bodies(peek_all(client, QUEUE, ServiceBusSubQueue.DEAD_LETTER)) == ["b"]

    assert api(broker, "POST", f"/$busbar/api/redrive/{QUEUE}") == (200, {"moved": 1, "kept": 0})
    assert bodies(peek_all(client, QUEUE)) == ["b"]
    assert counts(broker, QUEUE) == (1, 0, 0)
    api(broker, "POST", f"/$busbar/api/purge/{QUEUE}")


def test_send_with_a_schedule_and_properties(broker, client):
    later = int(time.time() * 1000) + 3_600_000
    message = {
        "body": '{"n": 1}',
        "contentType": "application/json",
        "messageId": "api-1",
        "applicationProperties": [["origin", "api"]],
        "scheduledEnqueueTime": later,
    }
    assert api(broker, "POST", f"/$busbar/api/messages/{QUEUE}", message) == (200, {})
    assert counts(broker, QUEUE) == (0, 0, 1)
    (peeked,) = client.get_queue_receiver(QUEUE).peek_messages(max_message_count=5)
    assert peeked.message_id == "api-1"
    assert peeked.application_properties == {b"origin": b"api"}
    assert peeked.scheduled_enqueue_time_utc.timestamp() * 1000 == later
    api(broker, "POST", f"/$busbar/api/purge/{QUEUE}")


def test_session_state_is_set_without_holding_the_session(broker, client):
    path = "/$busbar/api/session-state/q-api-sessions?session=s1"
    message = {"body": "in a session", "sessionId": "s1"}
    assert api(broker, "POST", "/$busbar/api/messages/q-api-sessions", message) == (200, {})
    assert api(broker, "PUT", path, {"state": "step 2"}) == (200, {})
    status, listed = api(broker, "GET", "/$busbar/api/sessions/q-api-sessions")
    assert status == 200
    assert listed["sessions"] == [
        {"id": "s1", "state": "step 2", "lockedBy": None, "lockedUntil": None}
    ]
    with client.get_queue_receiver("q-api-sessions", session_id="s1") as receiver:
        assert receiver.session.get_state() == b"step 2"
        status, listed = api(broker, "GET", "/$busbar/api/sessions/q-api-sessions")
        assert listed["sessions"][0]["lockedBy"].startswith("connection ")
    assert api(broker, "PUT", path, {"state": None}) == (200, {})
    with client.get_queue_receiver("q-api-sessions", session_id="s1") as receiver:
        assert receiver.session.get_state() is None
        assert bodies(receive_exactly(receiver, 1)) == ["in a session"]


def test_errors_are_json_with_client_statuses(broker):
    assert api(broker, "GET", "/$busbar/api/messages/no-such-queue")[0] == 404
    assert api(broker, "POST", f"/$busbar/api/messages/{QUEUE}", {"bogus": 1})[0] == 400
    assert api(broker, "GET", f"/$busbar/api/messages/{QUEUE}?subQueue=x")[0] == 400
