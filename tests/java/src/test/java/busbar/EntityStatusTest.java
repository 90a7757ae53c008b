// Entity status set through the ServiceBusAdministrationClient and enforced as Service Bus does:
// a send to a Disabled or SendDisabled queue fails with MESSAGING_ENTITY_DISABLED, a receive from a
// Disabled queue or subscription fails with com.microsoft:entity-disabled under the receiver's
// error, and the messages stay until the entity is active again. A disabled subscription still
// takes its topic's copies.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.EntityStatus;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.SubscriptionProperties;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class EntityStatusTest extends BrokerTest {
    private ServiceBusAdministrationClient admin;
    /** Clients that never retry, so a refusal surfaces at once. */
    private ServiceBusClientBuilder strict;

    @BeforeAll
    void clients() {
        admin = adminClient(broker.adminConnectionString());
        strict = newClientBuilder(0);
    }

    /** Creates `queue` holding one message, `body`. */
    private void createQueueHolding(String queue, String body) {
        admin.createQueue(queue);
        try (ServiceBusSenderClient sender = sender(queue)) {
            sender.sendMessage(new ServiceBusMessage(body));
        }
    }

    private void setQueueStatus(String queue, EntityStatus status) {
        QueueProperties properties = admin.getQueue(queue);
        properties.setStatus(status);
        assertEquals(status, admin.updateQueue(properties).getStatus());
        assertEquals(status, admin.getQueue(queue).getStatus());
    }

    private void setSubscriptionStatus(String topic, String subscription, EntityStatus status) {
        SubscriptionProperties properties = admin.getSubscription(topic, subscription);
        properties.setStatus(status);
        admin.updateSubscription(properties);
        assertEquals(status, admin.getSubscription(topic, subscription).getStatus());
    }

    private ServiceBusException refusedSend(String queue) {
        try (ServiceBusSenderClient sender = strict.sender().queueName(queue).buildClient()) {
            return assertFailsWith(ServiceBusFailureReason.MESSAGING_ENTITY_DISABLED,
                () -> sender.sendMessage(new ServiceBusMessage("refused")));
        }
    }

    /** A receive that must fail with com.microsoft:entity-disabled. */
    private static void assertReceiveRefused(ServiceBusReceiverClient receiver) {
        // The synchronous receiver reports a failed link as a RuntimeException around the
        // AmqpException that carries the condition.
        RuntimeException error = assertThrows(RuntimeException.class,
            () -> receiver.receiveMessages(1, Duration.ofSeconds(5)).forEach(message -> { }));
        assertEquals(AmqpErrorCondition.ENTITY_DISABLED_ERROR, conditionOf(error), () -> describe(error));
    }

    @Test
    void aDisabledQueueRefusesSendsAndReceivesAndKeepsItsMessages() {
        createQueueHolding("java-status-disabled", "kept");
        setQueueStatus("java-status-disabled", EntityStatus.DISABLED);

        ServiceBusException refused = refusedSend("java-status-disabled");
        assertTrue(describe(refused).contains("is currently disabled"), () -> describe(refused));
        try (ServiceBusReceiverClient receiver = strict.receiver().queueName("java-status-disabled")
                .buildClient()) {
            assertReceiveRefused(receiver);
        }

        setQueueStatus("java-status-disabled", EntityStatus.ACTIVE);
        try (ServiceBusReceiverClient receiver = receiver("java-status-disabled")) {
            assertEquals(List.of("kept"), bodies(receiveExactly(receiver, 1)));
        }
    }

    @Test
    void aSendDisabledQueueRefusesSendsButHandsOutItsMessages() {
        createQueueHolding("java-status-send-disabled", "before");
        setQueueStatus("java-status-send-disabled", EntityStatus.SEND_DISABLED);

        ServiceBusException refused = refusedSend("java-status-send-disabled");
        assertTrue(describe(refused).contains("is currently disabled for Send operations"),
            () -> describe(refused));
        try (ServiceBusReceiverClient receiver = receiver("java-status-send-disabled")) {
            assertEquals(List.of("before"), bodies(receiveExactly(receiver, 1)));
        }
    }

    @Test
    void aDisabledSubscriptionTakesCopiesButHandsOutNoneUntilActive() {
        String topic = "java-status-topic";
        admin.createTopic(topic);
        admin.createSubscription(topic, "suspended");
        admin.createSubscription(topic, "other");
        setSubscriptionStatus(topic, "suspended", EntityStatus.DISABLED);

        try (ServiceBusSenderClient sender = clients.sender().topicName(topic).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("copied"));
        }
        try (ServiceBusReceiverClient other = clients.receiver().topicName(topic)
                .subscriptionName("other").buildClient()) {
            assertEquals(List.of("copied"), bodies(receiveExactly(other, 1)));
        }
        try (ServiceBusReceiverClient suspended = strict.receiver().topicName(topic)
                .subscriptionName("suspended").buildClient()) {
            assertReceiveRefused(suspended);
        }
        assertEquals(1, admin.getSubscriptionRuntimeProperties(topic, "suspended").getActiveMessageCount());

        setSubscriptionStatus(topic, "suspended", EntityStatus.ACTIVE);
        try (ServiceBusReceiverClient suspended = clients.receiver().topicName(topic)
                .subscriptionName("suspended").buildClient()) {
            assertEquals(List.of("copied"), bodies(receiveExactly(suspended, 1)));
        }
    }
}
