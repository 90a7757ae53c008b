"""A restart on the same data directory keeps every message in its state; locks are released."""

import datetime

from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusMessageState, ServiceBusSubQueue

from support import body_text, bodies, peek_all, receive_exactly, receive_one, send_texts

DLQ = ServiceBusSubQueue.DEAD_LETTER


def test_restart_keeps_messages_dead_letters_deferrals_schedules_and_counts(own_broker):
    queue = "q-restart"
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        send_texts(client, queue, ["completed", "dead", "deferred", "abandoned", "locked", "untouched"])
        with client.get_queue_sender(queue) as sender:
            (scheduled,) = sender.schedule_messages(
                ServiceBusMessage("scheduled"),
                datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
            )
        with client.get_queue_receiver(queue) as receiver:
            completed, dead, deferred, abandoned, locked = receive_exactly(receiver, 5)
            assert bodies([completed, dead, deferred, abandoned, locked]) == [
                "completed",
                "dead",
                "deferred",
                "abandoned",
                "locked",
            ]
            receiver.complete_message(completed)
            receiver.dead_letter_message(dead, reason="Broken", error_description="kept across restarts")
            receiver.defer_message(deferred)
            receiver.abandon_message(abandoned)
            # "locked" stays locked (unsettled) when the broker stops.
            before = {message.sequence_number: body_text(message) for message in peek_all(client, queue)}

    own_broker.restart()

    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        peeked = peek_all(client, queue)
        # The same messages under the same sequence numbers; the completed one never returns.
        assert {message.sequence_number: body_text(message) for message in peeked} == before
        assert "completed" not in before.values()
        states = {body_text(message): message.state for message in peeked}
        assert states["deferred"] == ServiceBusMessageState.DEFERRED
        assert states["scheduled"] == ServiceBusMessageState.SCHEDULED
        assert states["abandoned"] == ServiceBusMessageState.ACTIVE

        with client.get_queue_receiver(queue) as receiver:
            # Locks do not survive the restart, delivery counts do.
            available = {body_text(message): message for message in receive_exactly(receiver, 3)}
            assert sorted(available) == ["abandoned", "locked", "untouched"]
            assert available["abandoned"].delivery_count == 1
            assert available["untouched"].delivery_count == 0
            assert available["locked"].sequence_number == locked.sequence_number
            for message in available.values():
                receiver.complete_message(message)

            (again_deferred,) = receiver.receive_deferred_messages([deferred.sequence_number])
            assert body_text(again_deferred) == "deferred"
            receiver.complete_message(again_deferred)

        with client.get_queue_receiver(queue, sub_queue=DLQ) as dlq_receiver:
            dead_again = receive_one(dlq_receiver)
            assert body_text(dead_again) == "dead"
            assert dead_again.dead_letter_reason == "Broken"
            assert dead_again.dead_letter_error_description == "kept across restarts"
            dlq_receiver.complete_message(dead_again)

        with client.get_queue_sender(queue) as sender:
            sender.cancel_scheduled_messages(scheduled)
            # Sequence numbers keep increasing after a restart.
            sender.send_messages(ServiceBusMessage("after restart"))
        (newest,) = peek_all(client, queue)
        assert body_text(newest) == "after restart"
        assert newest.sequence_number > max(before)


def test_connected_clients_do_not_block_shutdown_and_reconnect_after_a_restart(own_broker):
    queue = "q-reconnect"
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        with client.get_queue_sender(queue) as sender, client.get_queue_receiver(queue) as receiver:
            sender.send_messages(ServiceBusMessage("before"))
            held = receive_one(receiver)
            assert body_text(held) == "before"
            # SIGTERM with both links open and a lock held: the broker still exits 0 in time.
            own_broker.restart(same_port=True)
            # The SDK notices the closed connection and reconnects on its own.
            sender.send_messages(ServiceBusMessage("after"))
            # The lock did not survive the restart: "before" is delivered again.
            messages = receive_exactly(receiver, 2)
            assert sorted(bodies(messages)) == ["after", "before"]
            for message in messages:
                receiver.complete_message(message)
    with ServiceBusClient.from_connection_string(own_broker.connection_string) as client:
        assert peek_all(client, queue) == []
