// Message sessions: per-session FIFO through acceptSession, acceptNextSession, session state
// get/set, renewSessionLock, and the expiry of a session lock (LockDuration PT5S), after which
// completing fails with SESSION_LOCK_LOST and the message comes back with its delivery count raised.
package busbar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SessionTest extends BrokerTest {
    private static final Duration LOCK_DURATION = Duration.ofSeconds(5);

    private void send(String queue, String sessionId, String... bodies) {
        try (ServiceBusSenderClient sender = sender(queue)) {
            for (String body : bodies) {
                sender.sendMessage(new ServiceBusMessage(body).setSessionId(sessionId));
            }
        }
    }

    /** Session receivers that never renew the session lock by themselves. */
    private ServiceBusSessionReceiverClient sessions(String queue) {
        return sessions(clients, queue);
    }

    private static ServiceBusSessionReceiverClient sessions(ServiceBusClientBuilder builder, String queue) {
        return builder.sessionReceiver().queueName(queue).maxAutoLockRenewDuration(Duration.ZERO).buildClient();
    }

    @Test
    void aNamedSessionDeliversOnlyItsOwnMessagesInOrder() {
        try (ServiceBusSenderClient sender = sender("q-session-fifo")) {
            for (int i = 0; i < 4; i++) {
                sender.sendMessage(new ServiceBusMessage("a-" + i).setSessionId("a"));
                sender.sendMessage(new ServiceBusMessage("b-" + i).setSessionId("b"));
            }
        }
        try (ServiceBusSessionReceiverClient sessions = sessions("q-session-fifo")) {
            for (String id : List.of("b", "a")) {
                try (ServiceBusReceiverClient session = sessions.acceptSession(id)) {
                    assertEquals(id, session.getSessionId());
                    List<ServiceBusReceivedMessage> received = receiveExactly(session, 4);
                    assertEquals(IntStream.range(0, 4).mapToObj(i -> id + "-" + i).toList(), bodies(received));
                    for (ServiceBusReceivedMessage message : received) {
                        assertEquals(id, message.getSessionId());
                        session.complete(message);
                    }
                }
            }
        }
    }

    @Test
    void theNextAvailableSessionIsAccepted() {
        send("q-session-next", "only", "first", "second");
        try (ServiceBusSessionReceiverClient sessions = sessions("q-session-next");
             ServiceBusReceiverClient session = sessions.acceptNextSession()) {
            assertEquals("only", session.getSessionId());
            List<ServiceBusReceivedMessage> received = receiveExactly(session, 2);
            assertEquals(List.of("first", "second"), bodies(received));
            received.forEach(session::complete);
        }
    }

    @Test
    void sessionStateIsSetReadBackAndKeptAcrossAccepts() {
        send("q-session-state", "stateful", "work");
        byte[] state = "step=2".getBytes(StandardCharsets.UTF_8);
        try (ServiceBusSessionReceiverClient sessions = sessions("q-session-state");
             ServiceBusReceiverClient session = sessions.acceptSession("stateful")) {
            assertNull(session.getSessionState());
            session.setSessionState(state);
            assertArrayEquals(state, session.getSessionState());
        }
        // Another connection accepts the session again: the SDK names a named session's link after
        // the session, and on the same connection it may hand back the link that is still closing.
        try (ServiceBusSessionReceiverClient sessions = sessions(newClientBuilder(1), "q-session-state");
             ServiceBusReceiverClient session = sessions.acceptSession("stateful")) {
            assertArrayEquals(state, session.getSessionState());
            session.complete(receiveOne(session));
            session.setSessionState(null);
            assertNull(session.getSessionState());
        }
    }

    @Test
    void renewingTheSessionLockKeepsTheSessionPastItsFirstExpiry() throws InterruptedException {
        send("q-session-renew", "renewed", "kept");
        try (ServiceBusSessionReceiverClient sessions = sessions("q-session-renew");
             ServiceBusReceiverClient session = sessions.acceptSession("renewed")) {
            ServiceBusReceivedMessage message = receiveOne(session);
            OffsetDateTime firstLockEnd = message.getLockedUntil();
            OffsetDateTime previous = firstLockEnd;
            for (int i = 0; i < 3; i++) {
                Thread.sleep(2_000);
                OffsetDateTime renewedUntil = session.renewSessionLock();
                assertTrue(renewedUntil.isAfter(previous), renewedUntil + " is not after " + previous);
                previous = renewedUntil;
            }
            assertTrue(OffsetDateTime.now().isAfter(firstLockEnd), "the test must outlive the first lock");
            session.complete(message);
        }
    }

    @Test
    void anExpiredSessionLockIsLostAndTheMessageComesBack() throws InterruptedException {
        send("q-session-expiry", "expiring", "slow");
        try (ServiceBusSessionReceiverClient sessions = sessions("q-session-expiry")) {
            try (ServiceBusReceiverClient session = sessions.acceptSession("expiring")) {
                ServiceBusReceivedMessage message = receiveOne(session);
                assertEquals(0, message.getDeliveryCount());
                Thread.sleep(LOCK_DURATION.plusSeconds(2).toMillis());
                assertFailsWith(ServiceBusFailureReason.SESSION_LOCK_LOST, () -> session.complete(message));
            }
            try (ServiceBusReceiverClient session = sessions.acceptSession("expiring")) {
                ServiceBusReceivedMessage again = receiveOne(session);
                assertEquals("slow", text(again));
                assertEquals(1, again.getDeliveryCount());
                session.complete(again);
            }
        }
    }
}
