"""Message locks: renewal, expiry with redelivery, lock lost, and MaxDeliveryCount to the DLQ.

The queues here have `LockDuration` PT5S. Waiting for a lock to expire is done by a competing
receiver's `receive_messages`, which returns as soon as the broker redelivers the message.
"""

import datetime

import pytest
from azure.servicebus import ServiceBusSubQueue
from azure.servicebus.exceptions import MessageLockLostError

from support import body_text, peek_all, receive_one, send_texts

LOCK_DURATION = datetime.timedelta(seconds=5)
# Allowance for the time between the broker taking the lock and the test reading the clock.
CLOCK_SLACK = datetime.timedelta(seconds=2)
DLQ = ServiceBusSubQueue.DEAD_LETTER


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def assert_lock_of_one_duration(locked_until):
    remaining = locked_until - utc_now()
    assert LOCK_DURATION - CLOCK_SLACK < remaining <= LOCK_DURATION + CLOCK_SLACK, remaining


def test_renewing_the_lock_keeps_the_message_past_its_first_expiry(client):
    send_texts(client, "q-lock-renewal", ["renew-me"])
    with client.get_queue_receiver("q-lock-renewal") as holder, client.get_queue_receiver(
        "q-lock-renewal"
    ) as rival:
        message = receive_one(holder)
        first_lock_end = message.locked_until_utc
        assert_lock_of_one_duration(first_lock_end)
        previous = first_lock_end
        for _ in range(3):
            # While the lock is renewed nobody else gets the message; the rival's empty
            # two-second receive is also the pause between renewals.
            assert rival.receive_messages(max_message_count=1, max_wait_time=2) == []
            renewed_until = holder.renew_message_lock(message)
            assert renewed_until > previous
            assert_lock_of_one_duration(renewed_until)
            assert message.locked_until_utc == renewed_until
            previous = renewed_until
        assert utc_now() > first_lock_end, "the test must outlive the first lock"
        holder.complete_message(message)
    assert peek_all(client, "q-lock-renewal") == []


def test_expired_lock_redelivers_with_delivery_count_and_the_old_lock_is_lost(client):
    send_texts(client, "q-lock-expiry", ["slow"])
    with client.get_queue_receiver("q-lock-expiry") as holder, client.get_queue_receiver(
        "q-lock-expiry"
    ) as rival:
        first = receive_one(holder)
        assert first.delivery_count == 0
        assert_lock_of_one_duration(first.locked_until_utc)

        # Arrives once the five-second lock has expired.
        again = receive_one(rival)
        assert utc_now() >= first.locked_until_utc - CLOCK_SLACK
        assert body_text(again) == "slow"
        assert again.sequence_number == first.sequence_number
        assert again.delivery_count == 1
        assert again.lock_token != first.lock_token

        # The broker refuses to renew the expired lock ...
        with pytest.raises(MessageLockLostError):
            holder.renew_message_lock(first)
        # ... and the old delivery cannot be settled any more.
        with pytest.raises(MessageLockLostError):
            holder.complete_message(first)

        rival.complete_message(again)
    assert peek_all(client, "q-lock-expiry") == []


def test_abandoning_max_delivery_count_times_dead_letters_with_the_reason(client):
    send_texts(client, "q-max-delivery", ["unprocessable"])
    with client.get_queue_receiver("q-max-delivery") as receiver:
        # MaxDeliveryCount is 3: the third abandon exhausts it.
        for expected_count in range(3):
            message = receive_one(receiver)
            assert message.delivery_count == expected_count
            receiver.abandon_message(message)
    with client.get_queue_receiver("q-max-delivery", sub_queue=DLQ) as dlq_receiver:
        dead = receive_one(dlq_receiver)
        assert body_text(dead) == "unprocessable"
        assert dead.dead_letter_reason == "MaxDeliveryCountExceeded"
        assert dead.dead_letter_error_description, "the broker explains the dead-lettering"
        dlq_receiver.complete_message(dead)
    assert peek_all(client, "q-max-delivery") == []
    assert peek_all(client, "q-max-delivery", sub_queue=DLQ) == []


def test_lock_expiries_count_towards_max_delivery_count(client):
    send_texts(client, "q-max-delivery-expiry", ["forgotten"])
    with client.get_queue_receiver("q-max-delivery-expiry") as first_holder:
        assert receive_one(first_holder).delivery_count == 0
        with client.get_queue_receiver("q-max-delivery-expiry") as second_holder:
            # Redelivered once the first lock expires; MaxDeliveryCount is 2.
            assert receive_one(second_holder).delivery_count == 1
            with client.get_queue_receiver("q-max-delivery-expiry", sub_queue=DLQ) as dlq:
                # The second expiry exhausts MaxDeliveryCount.
                dead = receive_one(dlq)
    assert body_text(dead) == "forgotten"
    assert dead.dead_letter_reason == "MaxDeliveryCountExceeded"
    assert peek_all(client, "q-max-delivery-expiry") == []
