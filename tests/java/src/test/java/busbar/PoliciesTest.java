// Shared-access policies (--policies) through the Java SDK, on a broker started with keys of its
// own: a Listen-only key's send (its link refused with amqp:unauthorized-access) and a wrong key
// (its put-token refused with 401) are ServiceBusExceptions with the UNAUTHORIZED reason, and the
// admin client refuses a key without Manage with ClientAuthenticationException, while the Manage
// key sends and reads the queue.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.exception.ClientAuthenticationException;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PoliciesTest extends BrokerTest {
    private static final String QUEUE = "q-send-one";
    private final String rootKey = freshKey();
    private final String listenerKey = freshKey();

    private static String freshKey() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The suite's broker, started with a policies file of a Manage rule and a Listen rule. */
    @Override
    @BeforeAll
    void startBroker() throws Exception {
        Path policies = Files.createTempFile("busbar-java-policies-", ".json");
        policies.toFile().deleteOnExit();
        Files.writeString(policies, "{\"SharedAccessPolicies\": ["
            + "{\"KeyName\": \"root\", \"PrimaryKey\": \"" + rootKey
            + "\", \"Rights\": [\"Manage\", \"Send\", \"Listen\"]},"
            + "{\"KeyName\": \"listener\", \"PrimaryKey\": \"" + listenerKey
            + "\", \"Rights\": [\"Listen\"]}]}");
        broker = Broker.start("--policies", policies.toString());
        clients = newClientBuilder(1);
    }

    private String connectionString(int port, String keyName, String key) {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=" + keyName
            + ";SharedAccessKey=" + key + ";UseDevelopmentEmulator=true;";
    }

    private void send(String keyName, String key) {
        ServiceBusClientBuilder builder = new ServiceBusClientBuilder()
            .connectionString(connectionString(broker.port, keyName, key))
            .retryOptions(new AmqpRetryOptions().setMaxRetries(0).setTryTimeout(Duration.ofSeconds(10)));
        try (ServiceBusSenderClient sender = builder.sender().queueName(QUEUE).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("policies"));
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
    void theAdminClientRefusesAKeyWithoutManage() {
        ClientAuthenticationException refused = assertThrows(ClientAuthenticationException.class,
            () -> adminClient(connectionString(broker.adminPort, "listener", listenerKey)).getQueue(QUEUE));
        assertEquals(401, refused.getResponse().getStatusCode());
        assertEquals(QUEUE,
            adminClient(connectionString(broker.adminPort, "root", rootKey)).getQueue(QUEUE).getName());
    }
}
