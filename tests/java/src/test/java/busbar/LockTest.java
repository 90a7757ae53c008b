// Message locks on queues with LockDuration PT5S: renewMessageLock keeps a message past its first
// expiry; an expired lock redelivers the message with its delivery count raised, and the old
// holder's complete or renew then fails with MESSAGE_LOCK_LOST. A rival receiver's receive is
// what waits for the expiry: it returns as soon as the broker redelivers.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockTest extends BrokerTest {
    private static final Duration LOCK_DURATION = Duration.ofSeconds(5);
    /** Allowance for the time between the broker taking the lock and the test reading the clock. */
    private static final Duration CLOCK_SLACK = Duration.ofSeconds(2);

    private void send(String queue, String body) {
        try (ServiceBusSenderClient sender = sender(queue)) {
            sender.sendMessage(new ServiceBusMessage(body));
        }
    }

    private static void assertLockOfOneDuration(OffsetDateTime lockedUntil) {
        Duration remaining = Duration.between(OffsetDateTime.now(), lockedUntil);
        assertTrue(remaining.compareTo(LOCK_DURATION.minus(CLOCK_SLACK)) > 0
            && remaining.compareTo(LOCK_DURATION.plus(CLOCK_SLACK)) <= 0, "lock remaining " + remaining);
    }

    @Test
    void renewingTheLockKeepsTheMessagePastItsFirstExpiry() {
        send("q-lock-renew", "renew-me");
        try (ServiceBusReceiverClient holder = receiver("q-lock-renew");
             ServiceBusReceiverClient rival = receiver("q-lock-renew")) {
            ServiceBusReceivedMessage message = receiveOne(holder);
            OffsetDateTime firstLockEnd = message.getLockedUntil();
            assertLockOfOneDuration(firstLockEnd);
            OffsetDateTime previous = firstLockEnd;
            for (int i = 0; i < 3; i++) {
                // While the lock is renewed nobody else gets the message; the rival's empty
                // two-second receive is also the pause between renewals.
                assertEquals(List.of(), receiveWithin(rival, Duration.ofSeconds(2)));
                OffsetDateTime renewedUntil = holder.renewMessageLock(message);
                assertTrue(renewedUntil.isAfter(previous), renewedUntil + " is not after " + previous);
                assertLockOfOneDuration(renewedUntil);
                previous = renewedUntil;
            }
            assertTrue(OffsetDateTime.now().isAfter(firstLockEnd), "the test must outlive the first lock");
            holder.complete(message);
        }
        assertEquals(List.of(), peekAll("q-lock-renew"));
    }

    @Test
    void anExpiredLockRedeliversTheMessageAndTheOldLockIsLost() {
        send("q-lock-expiry", "slow");
        try (ServiceBusReceiverClient holder = receiver("q-lock-expiry");
             ServiceBusReceiverClient rival = receiver("q-lock-expiry")) {
            ServiceBusReceivedMessage first = receiveOne(holder);
            assertEquals(0, first.getDeliveryCount());
            assertLockOfOneDuration(first.getLockedUntil());

            // Arrives once the five-second lock has expired.
            ServiceBusReceivedMessage again = receiveOne(rival);
            assertTrue(OffsetDateTime.now().isAfter(first.getLockedUntil().minus(CLOCK_SLACK)));
            assertEquals("slow", text(again));
            assertEquals(first.getSequenceNumber(), again.getSequenceNumber());
            assertEquals(1, again.getDeliveryCount());
            assertNotEquals(first.getLockToken(), again.getLockToken());

            // The old holder can neither renew nor settle the expired delivery.
            assertFailsWith(ServiceBusFailureReason.MESSAGE_LOCK_LOST, () -> holder.renewMessageLock(first));
            assertFailsWith(ServiceBusFailureReason.MESSAGE_LOCK_LOST, () -> holder.complete(first));

            rival.complete(again);
        }
        assertEquals(List.of(), peekAll("q-lock-expiry"));
    }
}
