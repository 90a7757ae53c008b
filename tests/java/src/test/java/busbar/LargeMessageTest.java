// Premium's large messages through the official Java SDK: a queue created through the
// administration client with MaxMessageSizeInKilobytes 102400 takes a 50 MB message, which comes
// back whole and is completed; lowered to 1024 through the API, a larger message is refused as
// MESSAGE_SIZE_EXCEEDED.
package busbar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** Isolated: moving 50 MB would disturb the timings of the classes running beside it. */
@Isolated
class LargeMessageTest extends BrokerTest {
    private static final int MEGABYTE = 1024 * 1024;

    private static byte[] randomBody(int size) {
        byte[] body = new byte[size];
        new Random(size).nextBytes(body);
        return body;
    }

    @Test
    void a50MbMessageCrossesAQueueCreatedWithPremiumsLargestLimit() {
        ServiceBusAdministrationClient admin = adminClient(broker.adminConnectionString());
        admin.createQueue("java-large", new CreateQueueOptions().setMaxMessageSizeInKilobytes(102400L));
        QueueProperties read = admin.getQueue("java-large");
        assertEquals(102400L, read.getMaxMessageSizeInKilobytes());

        byte[] body = randomBody(50 * MEGABYTE);
        try (ServiceBusSenderClient sender = sender("java-large")) {
            sender.sendMessage(new ServiceBusMessage(body).setMessageId("large"));
        }
        try (ServiceBusReceiverClient receiver = receiver("java-large")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            assertEquals("large", message.getMessageId());
            assertArrayEquals(body, message.getBody().toBytes());
            receiver.complete(message);
            assertEquals(0, receiveWithin(receiver, Duration.ofSeconds(1)).size());
        }

        admin.updateQueue(read.setMaxMessageSizeInKilobytes(1024L));
        assertEquals(1024L, admin.getQueue("java-large").getMaxMessageSizeInKilobytes());
        try (ServiceBusSenderClient sender = newClientBuilder(0).sender().queueName("java-large").buildClient()) {
            assertFailsWith(ServiceBusFailureReason.MESSAGE_SIZE_EXCEEDED,
                () -> sender.sendMessage(new ServiceBusMessage(randomBody(MEGABYTE + 64 * 1024))));
        }
    }
}
