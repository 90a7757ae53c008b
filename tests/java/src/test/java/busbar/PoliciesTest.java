// Shared-access policies (--policies) through the Java SDK, on a broker started with keys of its
// own: a Listen-only key's send (its link refused with amqp:unauthorized-access) and a wrong key
// (its put-token refused with 401) are ServiceBusExceptions with the UNAUTHORIZED reason; a
// Send-only key sends and cannot receive; a Listen-only key's secondary receives and settles; the
// admin client refuses a key without Manage with ClientAuthenticationException (the explorer's
// API with 401), and creates a queue with a SharedAccessAuthorizationRule whose key, read back,
// works over AMQP there only (a topic's rule on its subscriptions and their dead-letter queues
// too); a SIGHUP re-read rotates a primary key and removes a rule at once,
// the secondary key working on; and the emulator key is refused at start-up off loopback.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.exception.ClientAuthenticationException;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.SubQueue;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.AccessRights;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.SharedAccessAuthorizationRule;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PoliciesTest extends BrokerTest {
    private static final String QUEUE = "q-send-one";
    private final String rootKey = freshKey();
    private final String senderKey = freshKey();
    private final String listenerKey = freshKey();
    private final String listenerSecondaryKey = freshKey();

    private static String freshKey() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The suite's broker, started with a policies file of a Manage, a Send and a Listen rule. */
    @Override
    @BeforeAll
    void startBroker() throws Exception {
        broker = Broker.start("--policies", writePolicies(Files.createTempFile("busbar-java-policies-", ".json"),
            senderKey, listenerKey));
        clients = newClientBuilder(1);
    }

    /** Writes root (Manage), listener (Listen, with the secondary) and, if given, sender (Send). */
    private String writePolicies(Path policies, String sender, String listener) throws IOException {
        policies.toFile().deleteOnExit();
        Files.writeString(policies, "{\"SharedAccessPolicies\": ["
            + "{\"KeyName\": \"root\", \"PrimaryKey\": \"" + rootKey
            + "\", \"Rights\": [\"Manage\", \"Send\", \"Listen\"]},"
            + (sender == null ? "" : "{\"KeyName\": \"sender\", \"PrimaryKey\": \"" + sender
                + "\", \"Rights\": [\"Send\"]},")
            + "{\"KeyName\": \"listener\", \"PrimaryKey\": \"" + listener
            + "\", \"SecondaryKey\": \"" + listenerSecondaryKey
            + "\", \"Rights\": [\"Listen\"]}]}");
        return policies.toString();
    }

    private String connectionString(int port, String keyName, String key) {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=" + keyName
            + ";SharedAccessKey=" + key + ";UseDevelopmentEmulator=true;";
    }

    /** A client builder that gives up at the first refusal. */
    private ServiceBusClientBuilder signedWith(String connectionString) {
        return new ServiceBusClientBuilder()
            .connectionString(connectionString)
            .retryOptions(new AmqpRetryOptions().setMaxRetries(0).setTryTimeout(Duration.ofSeconds(10)));
    }

    private void send(String keyName, String key) {
        sendTo(connectionString(broker.port, keyName, key), QUEUE);
    }

    private void sendTo(String connectionString, String queue) {
        try (ServiceBusSenderClient sender = signedWith(connectionString).sender().queueName(queue).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("policies"));
        }
    }

    /** Receives one message from `queue` and completes it. */
    private void receiveAndComplete(String connectionString, String queue) {
        try (ServiceBusReceiverClient receiver =
                 signedWith(connectionString).receiver().queueName(queue).buildClient()) {
            receiver.complete(receiveOne(receiver));
        }
    }

    @Test
    void aMissingSendClaimAndAWrongKeyAreUnauthorized() {
        ServiceBusException missingClaim = assertFailsWith(ServiceBusFailureReason.UNAUTHORIZED,
            () -> send("listener", listenerKey));
        assertTrue(describe(missingClaim).contains("'Send' claim(s) are required"),
            () -> describe(missingClaim));
        assertFailsWith(ServiceBusFailureReason.UNAUTHORIZED, () -> send("root", listenerKey));
        send("root", rootKey);
    }

    @Test
    void theAdminClientRefusesAKeyWithoutManage() throws Exception {
        ClientAuthenticationException refused = assertThrows(ClientAuthenticationException.class,
            () -> adminClient(connectionString(broker.adminPort, "listener", listenerKey)).getQueue(QUEUE));
        assertEquals(401, refused.getResponse().getStatusCode());
        assertEquals(QUEUE,
            adminClient(connectionString(broker.adminPort, "root", rootKey)).getQueue(QUEUE).getName());
        // The explorer's JSON API likewise needs Manage.
        String explorer = "http://127.0.0.1:" + broker.adminPort + "/$busbar/api/namespace";
        assertEquals(401, explorerStatus(explorer, "listener", listenerKey));
        assertEquals(200, explorerStatus(explorer, "root", rootKey));
    }

    /** The status of a GET of `address` with a SAS token of `keyName`'s `key`. */
    private static int explorerStatus(String address, String keyName, String key) throws Exception {
        String expiry = Long.toString(System.currentTimeMillis() / 1000 + 3600);
        String audience = URLEncoder.encode(address, StandardCharsets.UTF_8);
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        byte[] signature = mac.doFinal((audience + "\n" + expiry).getBytes(StandardCharsets.UTF_8));
        String token = "SharedAccessSignature sr=" + audience + "&sig="
            + URLEncoder.encode(Base64.getEncoder().encodeToString(signature), StandardCharsets.UTF_8)
            + "&se=" + expiry + "&skn=" + keyName;
        HttpRequest request = HttpRequest.newBuilder(URI.create(address)).header("Authorization", token).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void aSendOnlyKeySendsAndCannotReceiveAndAListenOnlyKeyReceivesAndSettles() {
        send("sender", senderKey);
        // The synchronous receiver reports its link's refusal as the AmqpException it wraps.
        RuntimeException refused = assertThrows(RuntimeException.class, () -> {
            try (ServiceBusReceiverClient receiver = signedWith(connectionString(broker.port, "sender", senderKey))
                     .receiver().queueName(QUEUE).buildClient()) {
                receiver.receiveMessages(1, Duration.ofSeconds(2)).stream().count();
            }
        });
        assertEquals(AmqpErrorCondition.UNAUTHORIZED_ACCESS, conditionOf(refused), () -> describe(refused));
        assertTrue(describe(refused).contains("'Listen' claim(s) are required"), () -> describe(refused));
        receiveAndComplete(connectionString(broker.port, "listener", listenerSecondaryKey), QUEUE);
    }

    @Test
    void theAdminClientMakesAnEntityRuleWhoseKeyWorksOnItsQueueOnly() {
        String queue = "java-entity-rule";
        String key = freshKey();
        ServiceBusAdministrationClient admin = adminClient(connectionString(broker.adminPort, "root", rootKey));
        CreateQueueOptions options = new CreateQueueOptions();
        options.getAuthorizationRules().add(
            new SharedAccessAuthorizationRule("java-app", key, List.of(AccessRights.SEND, AccessRights.LISTEN)));
        admin.createQueue(queue, options);
        SharedAccessAuthorizationRule read =
            (SharedAccessAuthorizationRule) admin.getQueue(queue).getAuthorizationRules().get(0);
        assertEquals("java-app", read.getKeyName());
        assertEquals(key, read.getPrimaryKey());
        assertEquals(2, read.getAccessRights().size());

        String own = connectionString(broker.port, "java-app", key) + "EntityPath=" + queue + ";";
        sendTo(own, queue);
        receiveAndComplete(own, queue);
        assertFailsWith(ServiceBusFailureReason.UNAUTHORIZED,
            () -> sendTo(connectionString(broker.port, "java-app", key), QUEUE));
    }

    @Test
    void aTopicRuleCoversItsSubscriptionsAndTheirDeadLetterQueues() {
        String topic = "java-topic-rule";
        String key = freshKey();
        ServiceBusAdministrationClient admin = adminClient(connectionString(broker.adminPort, "root", rootKey));
        CreateTopicOptions options = new CreateTopicOptions();
        options.getAuthorizationRules().add(
            new SharedAccessAuthorizationRule("java-billing", key, List.of(AccessRights.SEND, AccessRights.LISTEN)));
        admin.createTopic(topic, options);
        admin.createSubscription(topic, "audit");

        ServiceBusClientBuilder own =
            signedWith(connectionString(broker.port, "java-billing", key) + "EntityPath=" + topic + ";");
        try (ServiceBusSenderClient sender = own.sender().topicName(topic).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("for audit"));
        }
        try (ServiceBusReceiverClient receiver =
                 own.receiver().topicName(topic).subscriptionName("audit").buildClient()) {
            receiver.deadLetter(receiveOne(receiver), new DeadLetterOptions().setDeadLetterReason("checked"));
        }
        try (ServiceBusReceiverClient deadLetters = own.receiver().topicName(topic).subscriptionName("audit")
                 .subQueue(SubQueue.DEAD_LETTER_QUEUE).buildClient()) {
            ServiceBusReceivedMessage message = receiveOne(deadLetters);
            assertEquals("for audit", message.getBody().toString());
            assertEquals("checked", message.getDeadLetterReason());
            deadLetters.complete(message);
        }
        assertFailsWith(ServiceBusFailureReason.UNAUTHORIZED,
            () -> sendTo(connectionString(broker.port, "java-billing", key), QUEUE));
    }

    @Test
    void aReReadOnSighupRotatesAPrimaryAndRemovesARuleTheSecondaryWorkingOn() throws Exception {
        Path policies = Files.createTempFile("busbar-java-rotation-", ".json");
        Broker own = Broker.start("--policies", writePolicies(policies, senderKey, listenerKey));
        try {
            sendTo(connectionString(own.port, "sender", senderKey), QUEUE);
            String rotated = freshKey();
            writePolicies(policies, null, rotated);
            own.hangUp();
            assertFailsWith(ServiceBusFailureReason.UNAUTHORIZED,
                () -> sendTo(connectionString(own.port, "sender", senderKey), QUEUE));
            assertThrows(RuntimeException.class,
                () -> receiveAndComplete(connectionString(own.port, "listener", listenerKey), QUEUE));
            receiveAndComplete(connectionString(own.port, "listener", listenerSecondaryKey), QUEUE);
            sendTo(connectionString(own.port, "root", rootKey), QUEUE);
            receiveAndComplete(connectionString(own.port, "listener", rotated), QUEUE);
        } finally {
            own.stop();
        }
    }

    @Test
    void theEmulatorKeyIsRefusedAtStartUpOffLoopback() throws Exception {
        Process started = new ProcessBuilder(System.getenv("BUSBAR_BIN"), "--memory", "--listen", "0.0.0.0:0",
            "--tls-listen", "none", "--admin-listen", "none").redirectErrorStream(true).start();
        String output = new String(started.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, started.waitFor(), output);
        assertTrue(output.contains("--policies"), output);
    }
}
