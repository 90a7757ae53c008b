// Peek-lock settlement: complete, abandon (the delivery count rises), dead-letter with a reason and
// description (read back from the dead-letter sub-queue), and defer with receiveDeferredMessage.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SettlementTest extends BrokerTest {
    private void send(String queue, String body) {
        try (ServiceBusSenderClient sender = sender(queue)) {
            sender.sendMessage(new ServiceBusMessage(body));
        }
    }

    @Test
    void aCompletedMessageIsGoneForGood() {
        send("q-complete", "done");
        try (ServiceBusReceiverClient receiver = receiver("q-complete")) {
            receiver.complete(receiveOne(receiver));
            assertEquals(List.of(), receiveWithin(receiver, Duration.ofSeconds(1)));
        }
        assertEquals(List.of(), peekAll("q-complete"));
    }

    @Test
    void anAbandonedMessageComesBackWithItsDeliveryCountRaised() {
        send("q-abandon", "again");
        try (ServiceBusReceiverClient receiver = receiver("q-abandon")) {
            ServiceBusReceivedMessage first = receiveOne(receiver);
            assertEquals(0, first.getDeliveryCount());
            receiver.abandon(first);
            ServiceBusReceivedMessage second = receiveOne(receiver);
            assertEquals(first.getSequenceNumber(), second.getSequenceNumber());
            assertEquals(1, second.getDeliveryCount());
            receiver.abandon(second);
            ServiceBusReceivedMessage third = receiveOne(receiver);
            assertEquals(2, third.getDeliveryCount());
            receiver.complete(third);
        }
        assertEquals(List.of(), peekAll("q-abandon"));
    }

    @Test
    void aDeadLetteredMessageIsReadFromTheDeadLetterQueueWithItsReason() {
        send("q-dead-letter", "poison");
        try (ServiceBusReceiverClient receiver = receiver("q-dead-letter")) {
            receiver.deadLetter(receiveOne(receiver), new DeadLetterOptions()
                .setDeadLetterReason("BadFormat")
                .setDeadLetterErrorDescription("the body is not JSON"));
        }
        assertEquals(List.of(), peekAll("q-dead-letter"));
        try (ServiceBusReceiverClient deadLetters = deadLetterReceiver("q-dead-letter")) {
            ServiceBusReceivedMessage message = receiveOne(deadLetters);
            assertEquals("poison", text(message));
            assertEquals("BadFormat", message.getDeadLetterReason());
            assertEquals("the body is not JSON", message.getDeadLetterErrorDescription());
            assertEquals(List.of(), receiveWithin(deadLetters, Duration.ofSeconds(1)));
        }
    }

    @Test
    void aDeferredMessageIsFetchedByItsSequenceNumberAndCompleted() {
        send("q-defer", "later");
        send("q-defer", "now");
        try (ServiceBusReceiverClient receiver = receiver("q-defer")) {
            ServiceBusReceivedMessage later = receiveOne(receiver);
            assertEquals("later", text(later));
            receiver.defer(later);
            // A deferred message is not handed out again by a plain receive.
            ServiceBusReceivedMessage now = receiveOne(receiver);
            assertEquals("now", text(now));
            receiver.complete(now);

            ServiceBusReceivedMessage deferred = receiver.receiveDeferredMessage(later.getSequenceNumber());
            assertEquals("later", text(deferred));
            assertEquals(later.getSequenceNumber(), deferred.getSequenceNumber());
            assertEquals(ServiceBusMessageState.DEFERRED, deferred.getState());
            receiver.complete(deferred);
        }
        assertEquals(List.of(), peekAll("q-defer"));
    }
}
