// Message format round trips: AMQP value and sequence bodies (AmqpMessageBody, read back through
// getRawAmqpMessage) and typed application properties, including the SDK's described types
// (OffsetDateTime, Duration, URI) that the broker must pass through untouched.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.core.amqp.models.AmqpMessageBody;
import com.azure.core.amqp.models.AmqpMessageBodyType;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MessageFormatTest extends BrokerTest {
    private ServiceBusReceivedMessage roundTrip(String queue, ServiceBusMessage message) {
        try (ServiceBusSenderClient sender = sender(queue)) {
            sender.sendMessage(message);
        }
        try (ServiceBusReceiverClient receiver = receiver(queue)) {
            ServiceBusReceivedMessage received = receiveOne(receiver);
            receiver.complete(received);
            return received;
        }
    }

    @Test
    void anAmqpValueBodyArrivesAsAValue() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("name", "busbar");
        value.put("answer", 42L);
        value.put("ratio", 0.5);
        ServiceBusReceivedMessage received =
            roundTrip("q-value-body", new ServiceBusMessage(AmqpMessageBody.fromValue(value)));
        AmqpMessageBody body = received.getRawAmqpMessage().getBody();
        assertEquals(AmqpMessageBodyType.VALUE, body.getBodyType());
        assertEquals(value, body.getValue());
    }

    @Test
    void anAmqpSequenceBodyArrivesAsASequence() {
        List<Object> sequence = List.of("first", 2L, true);
        ServiceBusReceivedMessage received =
            roundTrip("q-sequence-body", new ServiceBusMessage(AmqpMessageBody.fromSequence(sequence)));
        AmqpMessageBody body = received.getRawAmqpMessage().getBody();
        assertEquals(AmqpMessageBodyType.SEQUENCE, body.getBodyType());
        assertEquals(sequence, body.getSequence());
    }

    @Test
    void typedApplicationPropertiesKeepTheirTypes() {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("string", "text");
        properties.put("int", 7);
        properties.put("long", 1L << 40);
        properties.put("short", (short) 3);
        properties.put("byte", (byte) 1);
        properties.put("double", 2.5);
        properties.put("float", 1.25f);
        properties.put("boolean", true);
        properties.put("uuid", UUID.fromString("7c9e6679-7425-40de-944b-e07fc1f90ae7"));
        properties.put("offset-date-time", OffsetDateTime.of(2024, 5, 6, 7, 8, 9, 0, ZoneOffset.UTC));
        properties.put("duration", Duration.ofSeconds(90));
        properties.put("uri", URI.create("sb://localhost/q-typed-properties"));
        ServiceBusMessage message = new ServiceBusMessage("typed");
        message.getApplicationProperties().putAll(properties);

        Map<String, Object> received = roundTrip("q-typed-properties", message).getApplicationProperties();
        for (Map.Entry<String, Object> sent : properties.entrySet()) {
            Object value = received.get(sent.getKey());
            assertEquals(sent.getValue(), value, sent.getKey());
            assertEquals(sent.getValue().getClass(), value.getClass(), sent.getKey());
        }
    }
}
