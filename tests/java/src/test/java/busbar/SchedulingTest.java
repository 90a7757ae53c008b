// scheduleMessage and cancelScheduledMessage, on a queue sender and on a topic sender (both go
// through the entity's $management link): a scheduled message is peeked as SCHEDULED and arrives at
// its time; a cancelled one never arrives.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;

class SchedulingTest extends BrokerTest {
    private static final Duration CLOCK_SLACK = Duration.ofSeconds(1);

    private static void assertNotBefore(OffsetDateTime due) {
        assertTrue(OffsetDateTime.now().isAfter(due.minus(CLOCK_SLACK)), "delivered before " + due);
    }

    @Test
    void aMessageScheduledOnAQueueArrivesAtItsTime() {
        OffsetDateTime due = OffsetDateTime.now().plusSeconds(3);
        long sequenceNumber;
        try (ServiceBusSenderClient sender = sender("q-schedule")) {
            sequenceNumber = sender.scheduleMessage(new ServiceBusMessage("on time"), due);
        }
        assertTrue(sequenceNumber >= 1);
        List<ServiceBusReceivedMessage> peeked = peekAll("q-schedule");
        assertEquals(1, peeked.size());
        assertEquals(sequenceNumber, peeked.get(0).getSequenceNumber());
        assertEquals(ServiceBusMessageState.SCHEDULED, peeked.get(0).getState());
        Duration offBy = Duration.between(due, peeked.get(0).getScheduledEnqueueTime()).abs();
        assertTrue(offBy.compareTo(CLOCK_SLACK) < 0, "scheduled time off by " + offBy);

        try (ServiceBusReceiverClient receiver = receiver("q-schedule")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            assertNotBefore(due);
            assertEquals("on time", text(message));
            assertEquals(sequenceNumber, message.getSequenceNumber());
            receiver.complete(message);
        }
    }

    @Test
    void aCancelledScheduledMessageOnAQueueNeverArrives() {
        OffsetDateTime due = OffsetDateTime.now().plusSeconds(2);
        try (ServiceBusSenderClient sender = sender("q-schedule-cancel")) {
            long cancelled = sender.scheduleMessage(new ServiceBusMessage("cancelled"), due);
            long kept = sender.scheduleMessage(new ServiceBusMessage("kept"), due);
            sender.cancelScheduledMessage(cancelled);
            assertEquals(List.of(kept),
                peekAll("q-schedule-cancel").stream().map(ServiceBusReceivedMessage::getSequenceNumber).toList());
        }
        try (ServiceBusReceiverClient receiver = receiver("q-schedule-cancel")) {
            // Both were due at the same instant: once "kept" arrives, "cancelled" would have too.
            ServiceBusReceivedMessage message = receiveOne(receiver);
            assertEquals("kept", text(message));
            receiver.complete(message);
            assertEquals(List.of(), receiveWithin(receiver, Duration.ofSeconds(1)));
        }
    }

    @Test
    void aTopicSenderSchedulesAndCancels() {
        // Far enough ahead that scheduling both and cancelling one finish first on a busy machine.
        OffsetDateTime due = OffsetDateTime.now().plusSeconds(6);
        try (ServiceBusSenderClient sender = clients.sender().topicName("t-schedule").buildClient()) {
            long cancelled = sender.scheduleMessage(new ServiceBusMessage("topic-cancelled"), due);
            sender.scheduleMessage(new ServiceBusMessage("topic-kept"), due);
            sender.cancelScheduledMessage(cancelled);
        }
        try (ServiceBusReceiverClient receiver = clients.receiver().topicName("t-schedule")
                .subscriptionName("all").maxAutoLockRenewDuration(Duration.ZERO).buildClient()) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            assertNotBefore(due);
            assertEquals("topic-kept", text(message));
            receiver.complete(message);
            assertEquals(List.of(), receiveWithin(receiver, Duration.ofSeconds(1)));
        }
    }
}
