// The Java test kit in a fresh project: the run's broker with the official SDK (send and receive
// over AMQP and AMQPS, a session, a dead-letter, a schedule brought due by the clock, a fault
// raised and retried), reset between tests, and a broker of a test's own.
package kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.core.amqp.AmqpTransportType;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.SubQueue;
import dev.busbar.testing.Busbar;
import dev.busbar.testing.BusbarException;
import dev.busbar.testing.BusbarExtension;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(BusbarExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KitTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static ServiceBusClientBuilder clients(String connectionString, int retries) {
        return new ServiceBusClientBuilder().connectionString(connectionString)
                .retryOptions(new AmqpRetryOptions().setMaxRetries(retries).setDelay(Duration.ofMillis(100)));
    }

    private static void send(ServiceBusClientBuilder clients, String queue, ServiceBusMessage message) {
        try (ServiceBusSenderClient sender = clients.sender().queueName(queue).buildClient()) {
            sender.sendMessage(message);
        }
    }

    private static List<ServiceBusReceivedMessage> receive(ServiceBusReceiverClient receiver, int count) {
        List<ServiceBusReceivedMessage> received = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (received.size() < count && System.nanoTime() < deadline) {
            receiver.receiveMessages(count - received.size(), WAIT).forEach(received::add);
        }
        assertEquals(count, received.size(), "messages received");
        return received;
    }

    private static String receiveOne(ServiceBusClientBuilder clients, String queue) {
        try (ServiceBusReceiverClient receiver = clients.receiver().queueName(queue).buildClient()) {
            ServiceBusReceivedMessage message = receive(receiver, 1).get(0);
            receiver.complete(message);
            return message.getBody().toString();
        }
    }

    @Test
    @Order(1)
    void sendAndReceiveOverAmqp(Busbar busbar) {
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        send(clients, "queue.1", new ServiceBusMessage("hello"));
        assertEquals("hello", receiveOne(clients, "queue.1"));
    }

    @Test
    @Order(2)
    void sendOverAmqpsWithTheProductionConnectionString(Busbar busbar) throws Exception {
        SSLContext previous = SSLContext.getDefault();
        SSLContext.setDefault(busbar.sslContext());
        try {
            ServiceBusClientBuilder tls = clients(busbar.productionConnectionString(), 3)
                    .customEndpointAddress(busbar.amqpsEndpoint()).transportType(AmqpTransportType.AMQP);
            send(tls, "queue.1", new ServiceBusMessage("over tls"));
            assertEquals("over tls", receiveOne(tls, "queue.1"));
        } finally {
            SSLContext.setDefault(previous);
        }
    }

    @Test
    @Order(3)
    void aSessionQueueCreatedForTheTest(Busbar busbar) {
        busbar.createQueue("orders", Map.of("RequiresSession", true));
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        try (ServiceBusSenderClient sender = clients.sender().queueName("orders").buildClient()) {
            sender.sendMessages(List.of(new ServiceBusMessage("step 1").setSessionId("cart-7"),
                    new ServiceBusMessage("step 2").setSessionId("cart-7")));
        }
        try (ServiceBusSessionReceiverClient sessions = clients.sessionReceiver().queueName("orders").buildClient();
                ServiceBusReceiverClient receiver = sessions.acceptSession("cart-7")) {
            List<String> bodies = receive(receiver, 2).stream().map(m -> m.getBody().toString()).toList();
            assertEquals(List.of("step 1", "step 2"), bodies);
            receiver.setSessionState("paid".getBytes());
            assertEquals("paid", new String(receiver.getSessionState()));
        }
    }

    @Test
    @Order(4)
    void aDeadLetter(Busbar busbar) {
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        send(clients, "queue.1", new ServiceBusMessage("poison"));
        try (ServiceBusReceiverClient receiver = clients.receiver().queueName("queue.1").buildClient()) {
            receiver.deadLetter(receive(receiver, 1).get(0), new DeadLetterOptions().setDeadLetterReason("bad"));
        }
        try (ServiceBusReceiverClient dead = clients.receiver().queueName("queue.1")
                .subQueue(SubQueue.DEAD_LETTER_QUEUE).buildClient()) {
            ServiceBusReceivedMessage message = receive(dead, 1).get(0);
            assertEquals(List.of("poison", "bad"), List.of(message.getBody().toString(), message.getDeadLetterReason()));
        }
    }

    @Test
    @Order(5)
    void aMessageScheduledAnHourAheadIsBroughtDueByTheClock(Busbar busbar) {
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        try (ServiceBusSenderClient sender = clients.sender().queueName("queue.1").buildClient()) {
            sender.scheduleMessage(new ServiceBusMessage("later"), OffsetDateTime.now().plusHours(1));
        }
        busbar.advanceClock(Duration.ofMinutes(61)); // queue.1's messages live an hour
        assertEquals("later", receiveOne(clients, "queue.1"));
    }

    @Test
    @Order(6)
    void aFaultIsRaisedWithoutRetriesAndRetriedAwayWithThem(Busbar busbar) {
        busbar.fault("queue.1", "server-busy", 1);
        ServiceBusException refused = assertThrows(ServiceBusException.class,
                () -> send(clients(busbar.connectionString(), 0), "queue.1", new ServiceBusMessage("refused")));
        // The Java SDK reports server-busy on a send as a general error caused by the AMQP one.
        Throwable cause = refused;
        while (cause != null && !(cause instanceof AmqpException)) {
            cause = cause.getCause();
        }
        assertTrue(cause instanceof AmqpException amqp && amqp.getErrorCondition() == AmqpErrorCondition.SERVER_BUSY_ERROR,
                "not server-busy: " + refused);
        busbar.fault("queue.1", "server-busy", 1);
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        send(clients, "queue.1", new ServiceBusMessage("retried"));
        assertEquals("retried", receiveOne(clients, "queue.1"));
    }

    @Test
    @Order(7)
    void resetFirstATestLeavesAMessageAndAQueue(Busbar busbar) {
        busbar.createQueue("left-over", Map.of());
        send(clients(busbar.connectionString(), 3), "queue.1", new ServiceBusMessage("left behind"));
    }

    @Test
    @Order(8)
    void resetThenTheNextTestStartsEmpty(Busbar busbar) {
        ServiceBusClientBuilder clients = clients(busbar.connectionString(), 3);
        try (ServiceBusReceiverClient receiver = clients.receiver().queueName("queue.1").buildClient()) {
            assertEquals(0, receiver.peekMessages(10).stream().count());
        }
        BusbarException gone = assertThrows(BusbarException.class, () -> busbar.purge("left-over", false));
        assertTrue(gone.getMessage().contains("404"), gone.getMessage());
    }

    @Test
    @Order(9)
    void aBrokerOfItsOwnWithFileStorageAndAConfig() {
        String config = "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Topics\": [],"
                + " \"Queues\": [{\"Name\": \"jobs\", \"Properties\": {\"MaxDeliveryCount\": 1}}]}],"
                + " \"Logging\": {\"Type\": \"Console\"}}}";
        try (Busbar own = Busbar.start(new Busbar.Options().fileStorage().configJson(config))) {
            send(clients(own.connectionString(), 3), "jobs", new ServiceBusMessage("kept on disk"));
            assertEquals(1, own.purge("jobs", false));
        }
    }
}
