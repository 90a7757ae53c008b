// The administration API through the official ServiceBusAdministrationClient: queues, topics,
// subscriptions and rules created, read, listed, changed and deleted while the broker runs, their
// runtime counts, and entities made through the API used over AMQP at once.
//
// The admin client is BrokerTest's (on the plain-HTTP admin port, as Microsoft's emulator sample
// does it).
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.exception.ClientAuthenticationException;
import com.azure.core.exception.ResourceExistsException;
import com.azure.core.exception.ResourceNotFoundException;
import com.azure.core.http.rest.PagedResponse;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.CreateSubscriptionOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.SubscriptionProperties;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AdminTest extends BrokerTest {
    private ServiceBusAdministrationClient admin;

    @BeforeAll
    void adminClient() {
        admin = adminClient(broker.adminConnectionString());
    }

    private static List<String> names(Iterable<QueueProperties> queues) {
        List<String> names = new ArrayList<>();
        queues.forEach(queue -> names.add(queue.getName()));
        return names;
    }

    @Test
    void aQueueIsCreatedWithItsPropertiesReadBackAndRefusedTwice() {
        QueueProperties created = admin.createQueue("java-made-by-api", new CreateQueueOptions()
            .setLockDuration(Duration.ofSeconds(30))
            .setMaxDeliveryCount(7)
            .setDefaultMessageTimeToLive(Duration.ofDays(1))
            .setDeadLetteringOnMessageExpiration(true)
            .setDuplicateDetectionRequired(true)
            .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(2))
            .setMaxSizeInMegabytes(2048)
            .setUserMetadata("made by the Java admin test"));
        assertEquals("java-made-by-api", created.getName());
        QueueProperties read = admin.getQueue("java-made-by-api");
        for (QueueProperties queue : List.of(created, read)) {
            assertEquals("java-made-by-api", queue.getName());
            assertEquals(Duration.ofSeconds(30), queue.getLockDuration());
            assertEquals(7, queue.getMaxDeliveryCount());
            assertEquals(Duration.ofDays(1), queue.getDefaultMessageTimeToLive());
            assertTrue(queue.isDeadLetteringOnMessageExpiration());
            assertTrue(queue.isDuplicateDetectionRequired());
            assertEquals(Duration.ofMinutes(2), queue.getDuplicateDetectionHistoryTimeWindow());
            assertEquals(2048, queue.getMaxSizeInMegabytes());
            assertEquals("made by the Java admin test", queue.getUserMetadata());
        }
        assertTrue(admin.getQueueExists("java-made-by-api"));
        assertThrows(ResourceExistsException.class, () -> admin.createQueue("java-made-by-api"));
    }

    @Test
    void aMissingQueueIsResourceNotFound() {
        assertThrows(ResourceNotFoundException.class, () -> admin.getQueue("java-no-such-queue"));
        assertThrows(ResourceNotFoundException.class,
            () -> admin.getQueueRuntimeProperties("java-no-such-queue"));
        assertFalse(admin.getQueueExists("java-no-such-queue"));
        assertThrows(ResourceNotFoundException.class, () -> admin.deleteQueue("java-no-such-queue"));
    }

    @Test
    void runtimePropertiesCountActiveDeadLetteredAndScheduledMessages() {
        admin.createQueue("java-counted");
        // Used over AMQP at once.
        try (ServiceBusSenderClient sender = sender("java-counted")) {
            sender.sendMessages(List.of(new ServiceBusMessage("m0"), new ServiceBusMessage("m1"),
                new ServiceBusMessage("m2")));
            sender.scheduleMessage(new ServiceBusMessage("later"), OffsetDateTime.now().plusHours(1));
        }
        try (ServiceBusReceiverClient receiver = receiver("java-counted")) {
            receiver.deadLetter(receiveOne(receiver));
        }
        QueueRuntimeProperties runtime = admin.getQueueRuntimeProperties("java-counted");
        assertEquals("java-counted", runtime.getName());
        assertEquals(2, runtime.getActiveMessageCount());
        assertEquals(1, runtime.getDeadLetterMessageCount());
        assertEquals(1, runtime.getScheduledMessageCount());
        assertEquals(4, runtime.getTotalMessageCount());
        assertTrue(runtime.getSizeInBytes() > 0, "sizeInBytes " + runtime.getSizeInBytes());
        assertNotNull(runtime.getCreatedAt());
    }

    @Test
    void listingQueuesPagesPastOneHundred() throws Exception {
        List<String> made = IntStream.range(0, 105).mapToObj(i -> String.format("java-page-%03d", i)).toList();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<QueueProperties>> creations = new ArrayList<>();
            for (String name : made) {
                creations.add(pool.submit(() -> admin.createQueue(name)));
            }
            for (Future<QueueProperties> creation : creations) {
                creation.get();
            }
        } finally {
            pool.shutdown();
        }
        List<String> listed = names(admin.listQueues());
        assertTrue(listed.containsAll(made), () -> "listed " + listed.size() + ": " + listed);
        assertTrue(listed.contains("q-send-one"));
        assertEquals(listed.size(), new HashSet<>(listed).size(), "no queue is listed twice");
        List<Integer> pages = new ArrayList<>();
        for (PagedResponse<QueueProperties> page : admin.listQueues().iterableByPage()) {
            pages.add(page.getValue().size());
        }
        assertTrue(pages.size() >= 2, "pages " + pages);
        assertEquals(100, pages.get(0), "pages " + pages);
        assertEquals(listed.size(), pages.stream().mapToInt(Integer::intValue).sum(), "pages " + pages);
    }

    @Test
    void anUpdateOfTheLockDurationTakesEffect() {
        admin.createQueue("java-lock-change", new CreateQueueOptions()
            .setLockDuration(Duration.ofSeconds(10)).setMaxDeliveryCount(3));
        QueueProperties queue = admin.getQueue("java-lock-change");
        assertEquals(Duration.ofSeconds(10), queue.getLockDuration());
        queue.setLockDuration(Duration.ofMinutes(2));
        assertEquals(Duration.ofMinutes(2), admin.updateQueue(queue).getLockDuration());
        QueueProperties read = admin.getQueue("java-lock-change");
        assertEquals(Duration.ofMinutes(2), read.getLockDuration());
        assertEquals(3, read.getMaxDeliveryCount(), "the update keeps the other properties");

        try (ServiceBusSenderClient sender = sender("java-lock-change")) {
            sender.sendMessage(new ServiceBusMessage("held"));
        }
        try (ServiceBusReceiverClient receiver = receiver("java-lock-change")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            Duration heldFor = Duration.between(OffsetDateTime.now(), message.getLockedUntil());
            assertTrue(heldFor.compareTo(Duration.ofSeconds(90)) > 0, "lock held for " + heldFor);
            receiver.complete(message);
        }
    }

    @Test
    void aDeletedQueueIsGoneFromReadsListsAndAmqp() {
        admin.createQueue("java-short-lived");
        try (ServiceBusSenderClient sender = sender("java-short-lived")) {
            sender.sendMessage(new ServiceBusMessage("gone with it"));
        }
        admin.deleteQueue("java-short-lived");
        assertThrows(ResourceNotFoundException.class, () -> admin.getQueue("java-short-lived"));
        assertFalse(admin.getQueueExists("java-short-lived"));
        assertFalse(names(admin.listQueues()).contains("java-short-lived"));
        try (ServiceBusSenderClient sender = newClientBuilder(0).sender().queueName("java-short-lived")
                .buildClient()) {
            assertFailsWith(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND,
                () -> sender.sendMessage(new ServiceBusMessage("refused")));
        }
    }

    @Test
    void aTokenSignedWithTheWrongKeyIsRefused() {
        ServiceBusAdministrationClient wrong =
            adminClient(broker.adminConnectionString().replace("SAS_KEY_VALUE", "NOT_THE_KEY"));
        ClientAuthenticationException refused =
            assertThrows(ClientAuthenticationException.class, () -> wrong.getQueue("q-send-one"));
        assertEquals(401, refused.getResponse().getStatusCode());
        assertThrows(ClientAuthenticationException.class, () -> wrong.createQueue("java-never-made"));
        assertFalse(admin.getQueueExists("java-never-made"));
    }

    @Test
    void topicsSubscriptionsAndSqlRulesAreManagedAndRouteMessages() {
        String topic = "java-api-topic";
        assertEquals(topic, admin.createTopic(topic,
            new CreateTopicOptions().setDefaultMessageTimeToLive(Duration.ofHours(2))).getName());
        assertEquals(Duration.ofHours(2), admin.getTopic(topic).getDefaultMessageTimeToLive());
        assertThrows(ResourceExistsException.class, () -> admin.createTopic(topic));

        admin.createSubscription(topic, "everything", new CreateSubscriptionOptions().setMaxDeliveryCount(5));
        admin.createSubscription(topic, "red-only",
            new CreateSubscriptionOptions().setLockDuration(Duration.ofSeconds(45)));
        SubscriptionProperties redOnly = admin.getSubscription(topic, "red-only");
        assertEquals("red-only", redOnly.getSubscriptionName());
        assertEquals(topic, redOnly.getTopicName());
        assertEquals(Duration.ofSeconds(45), redOnly.getLockDuration());
        assertEquals(5, admin.getSubscription(topic, "everything").getMaxDeliveryCount());
        List<String> subscriptions = new ArrayList<>();
        admin.listSubscriptions(topic).forEach(s -> subscriptions.add(s.getSubscriptionName()));
        assertEquals(List.of("everything", "red-only"), subscriptions);
        assertThrows(ResourceNotFoundException.class, () -> admin.getSubscription(topic, "no-such-subscription"));

        // With options, this SDK's createRule takes the rule's name before the subscription's.
        RuleProperties rule = admin.createRule(topic, "red", "red-only",
            new CreateRuleOptions(new SqlRuleFilter("color = 'red'")));
        assertEquals("red", rule.getName());
        admin.deleteRule(topic, "red-only", "$Default");
        SqlRuleFilter filter = assertInstanceOf(SqlRuleFilter.class, admin.getRule(topic, "red-only", "red").getFilter());
        assertEquals("color = 'red'", filter.getSqlExpression());
        List<String> rules = new ArrayList<>();
        admin.listRules(topic, "red-only").forEach(r -> rules.add(r.getName()));
        assertEquals(List.of("red"), rules);
        assertInstanceOf(TrueRuleFilter.class, admin.getRule(topic, "everything", "$Default").getFilter());
        assertThrows(ResourceExistsException.class, () -> admin.createRule(topic, "red", "red-only",
            new CreateRuleOptions(new SqlRuleFilter("1=1"))));
        assertThrows(ResourceNotFoundException.class, () -> admin.getRule(topic, "red-only", "$Default"));

        try (ServiceBusSenderClient sender = clients.sender().topicName(topic).buildClient()) {
            for (String color : List.of("red", "blue")) {
                ServiceBusMessage message = new ServiceBusMessage(color);
                message.getApplicationProperties().put("color", color);
                sender.sendMessage(message);
            }
        }
        try (ServiceBusReceiverClient receiver = clients.receiver().topicName(topic).subscriptionName("red-only")
                .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            assertEquals(List.of("red"), bodies(receiveExactly(receiver, 1)));
            assertEquals(List.of(), bodies(receiveWithin(receiver, Duration.ofMillis(500))));
        }
        assertEquals(2, admin.getSubscriptionRuntimeProperties(topic, "everything").getActiveMessageCount());
        assertEquals(2, admin.getTopicRuntimeProperties(topic).getSubscriptionCount());

        admin.deleteRule(topic, "red-only", "red");
        assertFalse(admin.listRules(topic, "red-only").iterator().hasNext());
        admin.deleteSubscription(topic, "everything");
        assertThrows(ResourceNotFoundException.class, () -> admin.getSubscription(topic, "everything"));
        admin.deleteTopic(topic);
        assertThrows(ResourceNotFoundException.class, () -> admin.getTopic(topic));
        assertFalse(admin.getTopicExists(topic));
    }
}
