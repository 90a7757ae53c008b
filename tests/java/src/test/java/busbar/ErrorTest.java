// The failure reasons the SDK reports (ServiceBusException.getReason()): a missing entity is
// MESSAGING_ENTITY_NOT_FOUND for a sender (and amqp:not-found under a receiver's error); a message
// beyond the 256 KiB limit the broker advertises is MESSAGE_SIZE_EXCEEDED, and the same sender goes
// on sending afterwards.
// (MESSAGE_LOCK_LOST and SESSION_LOCK_LOST are checked in LockTest and SessionTest; transactions
// in TransactionTest.)
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ErrorTest extends BrokerTest {
    /** Service Bus (and the emulator) accept messages up to 256 KiB. */
    private static final int MAX_MESSAGE_SIZE = 256 * 1024;

    /** Clients that never retry, so an error surfaces at once. */
    private ServiceBusClientBuilder strict;

    @BeforeAll
    void strictClients() {
        strict = newClientBuilder(0);
    }

    @Test
    void sendingToAMissingQueueIsEntityNotFound() {
        try (ServiceBusSenderClient sender = strict.sender().queueName("no-such-queue").buildClient()) {
            assertFailsWith(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND,
                () -> sender.sendMessage(new ServiceBusMessage("lost")));
        }
    }

    @Test
    void receivingFromAMissingQueueIsEntityNotFound() {
        try (ServiceBusReceiverClient receiver = strict.receiver().queueName("no-such-queue").buildClient()) {
            // The synchronous receiver reports a failed link as a RuntimeException ("The receiver
            // client is terminated") around the AmqpException that the SDK maps to the reason.
            RuntimeException error = assertThrows(RuntimeException.class,
                () -> receiver.receiveMessages(1, Duration.ofSeconds(5)).forEach(message -> { }));
            assertEquals(AmqpErrorCondition.NOT_FOUND, conditionOf(error), () -> describe(error));
        }
    }

    @Test
    void anOversizedMessageIsRefusedAndTheSenderGoesOn() {
        try (ServiceBusSenderClient sender = strict.sender().queueName("q-oversize").buildClient()) {
            // The SDK sizes batches by the max-message-size the broker advertises on the link.
            assertEquals(MAX_MESSAGE_SIZE, sender.createMessageBatch().getMaxSizeInBytes());
            byte[] oversized = new byte[3 * 512 * 1024]; // 1.5 MiB
            assertFailsWith(ServiceBusFailureReason.MESSAGE_SIZE_EXCEEDED,
                () -> sender.sendMessage(new ServiceBusMessage(oversized)));
            sender.sendMessage(new ServiceBusMessage("small"));
        }
        assertEquals(List.of("small"), bodies(peekAll("q-oversize")));
    }
}
