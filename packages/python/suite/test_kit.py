"""The Python test kit in a fresh project: the session's broker with the official SDK (send and
receive over AMQP and AMQPS, a session, a dead-letter, a schedule brought due by the clock, a
fault raised and retried), reset between tests, and a broker of a test's own."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.exceptions import ServiceBusServerBusyError

WAIT = 10  # seconds: a bound on a receive that should succeed at once


def receive_one(client, queue, **options):
    with client.get_queue_receiver(queue, max_wait_time=WAIT, **options) as receiver:
        (message,) = receiver.receive_messages(max_message_count=1, max_wait_time=WAIT)
        receiver.complete_message(message)
        return str(message)


def test_send_and_receive_over_amqp_and_amqps(busbar):
    for tls in (False, True):
        with busbar.client(tls=tls) as client:
            client.get_queue_sender("queue.1").send_messages(ServiceBusMessage(f"tls={tls}"))
            assert receive_one(client, "queue.1") == f"tls={tls}"


def test_a_session_queue_created_for_the_test(busbar):
    busbar.create_queue("orders", RequiresSession=True)
    with busbar.client() as client:
        with client.get_queue_sender("orders") as sender:
            sender.send_messages([ServiceBusMessage(f"step {n}", session_id="cart-7") for n in (1, 2)])
        with client.get_queue_receiver("orders", session_id="cart-7", max_wait_time=WAIT) as receiver:
            received = receiver.receive_messages(max_message_count=2, max_wait_time=WAIT)
            while len(received) < 2:
                received += receiver.receive_messages(max_message_count=1, max_wait_time=WAIT)
            assert [str(m) for m in received] == ["step 1", "step 2"]
            receiver.session.set_state(b"paid")
            assert receiver.session.get_state() == b"paid"


def test_a_dead_letter(busbar):
    with busbar.client() as client:
        client.get_queue_sender("queue.1").send_messages(ServiceBusMessage("poison"))
        with client.get_queue_receiver("queue.1", max_wait_time=WAIT) as receiver:
            (message,) = receiver.receive_messages(max_wait_time=WAIT)
            receiver.dead_letter_message(message, reason="bad", error_description="unreadable")
        with client.get_queue_receiver(
            "queue.1", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=WAIT
        ) as dead_letters:
            (dead,) = dead_letters.receive_messages(max_wait_time=WAIT)
            assert (str(dead), dead.dead_letter_reason) == ("poison", "bad")


def test_a_message_scheduled_an_hour_ahead_is_brought_due_by_the_clock(busbar):
    with busbar.client() as client:
        due = datetime.now(timezone.utc) + timedelta(hours=1)
        client.get_queue_sender("queue.1").schedule_messages(ServiceBusMessage("later"), due)
        with client.get_queue_receiver("queue.1") as receiver:
            assert receiver.receive_messages(max_wait_time=1) == []
        busbar.advance_clock(timedelta(minutes=61))  # queue.1's messages live an hour
        assert receive_one(client, "queue.1") == "later"


def test_a_fault_is_raised_without_retries_and_retried_away_with_them(busbar):
    busbar.fault("queue.1", "server-busy")
    with busbar.client(retry_total=0) as strict:
        with pytest.raises(ServiceBusServerBusyError):
            strict.get_queue_sender("queue.1").send_messages(ServiceBusMessage("refused"))
    busbar.fault("queue.1", "server-busy", count=1)
    with busbar.client(retry_backoff_factor=0.1) as client:
        client.get_queue_sender("queue.1").send_messages(ServiceBusMessage("retried"))
        assert receive_one(client, "queue.1") == "retried"


def test_reset_first_a_test_leaves_a_message_and_a_queue(busbar):
    busbar.create_queue("left-over")
    with busbar.client() as client:
        client.get_queue_sender("queue.1").send_messages(ServiceBusMessage("left behind"))


def test_reset_then_the_next_test_starts_empty(busbar):
    with busbar.client() as client:
        with client.get_queue_receiver("queue.1") as receiver:
            assert receiver.peek_messages(max_message_count=10) == []
    with pytest.raises(Exception, match="404"):
        busbar.purge("left-over")


def test_a_broker_of_its_own_with_file_storage_and_a_config(busbar_factory):
    config = {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [
        {"Name": "jobs", "Properties": {"MaxDeliveryCount": 1}}], "Topics": []}],
        "Logging": {"Type": "Console"}}}
    broker = busbar_factory(storage="file", config=config)
    with broker.client() as client:
        client.get_queue_sender("jobs").send_messages(ServiceBusMessage("kept on disk"))
    assert broker.purge("jobs") == 1
