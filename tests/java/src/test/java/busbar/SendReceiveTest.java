// Sending single messages, lists and ServiceBusMessageBatch, and receiving them in peek-lock and
// receive-and-delete modes.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SendReceiveTest extends BrokerTest {
    @Test
    void aSentMessageArrivesWithItsBodyAndProperties() {
        ServiceBusMessage sent = new ServiceBusMessage("hello, busbar")
            .setMessageId("id-1")
            .setCorrelationId("corr-1")
            .setSubject("greeting")
            .setContentType("text/plain")
            .setTimeToLive(Duration.ofMinutes(5));
        sent.getApplicationProperties().put("origin", "java");
        try (ServiceBusSenderClient sender = sender("q-send-one")) {
            sender.sendMessage(sent);
        }
        try (ServiceBusReceiverClient receiver = receiver("q-send-one")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            assertEquals("hello, busbar", text(message));
            assertEquals("id-1", message.getMessageId());
            assertEquals("corr-1", message.getCorrelationId());
            assertEquals("greeting", message.getSubject());
            assertEquals("text/plain", message.getContentType());
            assertEquals(Duration.ofMinutes(5), message.getTimeToLive());
            assertEquals("java", message.getApplicationProperties().get("origin"));
            assertEquals(0, message.getDeliveryCount());
            assertTrue(message.getSequenceNumber() >= 1);
            assertTrue(message.getLockedUntil().isAfter(message.getEnqueuedTime()));
            receiver.complete(message);
        }
        assertEquals(List.of(), peekAll("q-send-one"));
    }

    @Test
    void aMessageBatchArrivesCompleteAndInOrder() {
        List<String> sent = IntStream.range(0, 50).mapToObj(i -> "batched-" + i).toList();
        try (ServiceBusSenderClient sender = sender("q-send-batch")) {
            ServiceBusMessageBatch batch = sender.createMessageBatch();
            for (String body : sent) {
                assertTrue(batch.tryAddMessage(new ServiceBusMessage(body)), "the batch is full at " + body);
            }
            assertEquals(50, batch.getCount());
            sender.sendMessages(batch);
        }
        try (ServiceBusReceiverClient receiver = receiver("q-send-batch")) {
            List<ServiceBusReceivedMessage> received = receiveExactly(receiver, sent.size());
            assertEquals(sent, bodies(received));
            for (int i = 1; i < received.size(); i++) {
                assertTrue(received.get(i).getSequenceNumber() > received.get(i - 1).getSequenceNumber());
            }
            received.forEach(receiver::complete);
        }
        assertEquals(List.of(), peekAll("q-send-batch"));
    }

    @Test
    void aListOfMessagesIsSentInOneCall() {
        try (ServiceBusSenderClient sender = sender("q-send-list")) {
            sender.sendMessages(List.of(new ServiceBusMessage("one"), new ServiceBusMessage("two"),
                new ServiceBusMessage("three")));
        }
        try (ServiceBusReceiverClient receiver = receiver("q-send-list")) {
            List<ServiceBusReceivedMessage> received = receiveExactly(receiver, 3);
            assertEquals(List.of("one", "two", "three"), bodies(received));
            received.forEach(receiver::complete);
        }
    }

    @Test
    void receiveAndDeleteRemovesTheMessageAsItIsHandedOut() {
        try (ServiceBusSenderClient sender = sender("q-receive-and-delete")) {
            sender.sendMessage(new ServiceBusMessage("taken"));
        }
        try (ServiceBusReceiverClient receiver = clients.receiver().queueName("q-receive-and-delete")
                .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            assertEquals("taken", text(receiveOne(receiver)));
        }
        assertEquals(List.of(), peekAll("q-receive-and-delete"));
    }
}
