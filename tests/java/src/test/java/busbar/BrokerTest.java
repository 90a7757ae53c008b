// The base of every test class: one broker per class (started before its first test, stopped
// with SIGTERM after its last), one ServiceBusClientBuilder whose clients share one connection,
// bounded receive helpers and a check for the SDK's failure reasons. SDK timeouts and retries are
// kept small so that a failure comes back in seconds; a failed test prints the broker's log tail.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.core.amqp.models.AmqpMessageBodyType;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;
import java.net.MalformedURLException;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.api.function.Executable;
import reactor.core.publisher.Mono;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class BrokerTest {
    /** An upper bound that only guards against a hung broker; tests go on once the outcome is in. */
    static final Duration RECEIVE_GUARD = Duration.ofSeconds(20);

    protected Broker broker;
    /** Clients built from one builder share its connection. */
    protected ServiceBusClientBuilder clients;

    @RegisterExtension
    final TestWatcher brokerLogOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            if (broker != null) {
                System.err.println("--- busbar log tail after " + context.getDisplayName()
                    + " failed ---\n" + broker.logTail());
            }
        }
    };

    @BeforeAll
    void startBroker() throws Exception {
        broker = Broker.start();
        clients = newClientBuilder(1);
    }

    @AfterAll
    void stopBroker() throws Exception {
        if (broker != null) {
            broker.stop();
        }
    }

    /** A builder with its own connection: at most `retries` retries, each try within 10 s. */
    ServiceBusClientBuilder newClientBuilder(int retries) {
        return new ServiceBusClientBuilder()
            .connectionString(broker.connectionString())
            .retryOptions(new AmqpRetryOptions()
                .setMaxRetries(retries)
                .setDelay(Duration.ofMillis(100))
                .setMaxDelay(Duration.ofSeconds(1))
                .setTryTimeout(Duration.ofSeconds(10)));
    }

    /**
     * The administration client on the broker's admin port. The Java SDK always dials https on
     * port 443 (the connection string's port is dropped), so it is used with the workaround of
     * Microsoft's emulator sample: a pipeline policy that rewrites each request's URL to
     * http://localhost:<admin port>/….
     */
    ServiceBusAdministrationClient adminClient(String connectionString) {
        int adminPort = broker.adminPort;
        HttpPipelinePolicy forceHttp = (context, next) -> {
            try {
                URL current = context.getHttpRequest().getUrl();
                context.getHttpRequest().setUrl(new URL("http", current.getHost(), adminPort, current.getFile()));
            } catch (MalformedURLException error) {
                return Mono.error(error);
            }
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder()
            .connectionString(connectionString)
            .addPolicy(forceHttp)
            .buildClient();
    }

    ServiceBusSenderClient sender(String queue) {
        return clients.sender().queueName(queue).buildClient();
    }

    /** A peek-lock receiver that never renews locks by itself (tests renew them explicitly). */
    ServiceBusReceiverClient receiver(String queue) {
        return clients.receiver().queueName(queue).maxAutoLockRenewDuration(Duration.ZERO).buildClient();
    }

    ServiceBusReceiverClient deadLetterReceiver(String queue) {
        return clients.receiver().queueName(queue).subQueue(SubQueue.DEAD_LETTER_QUEUE)
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient();
    }

    /** Receives until `count` messages arrived; fails after RECEIVE_GUARD. */
    static List<ServiceBusReceivedMessage> receiveExactly(ServiceBusReceiverClient receiver, int count) {
        List<ServiceBusReceivedMessage> received = new ArrayList<>();
        Instant deadline = Instant.now().plus(RECEIVE_GUARD);
        while (received.size() < count) {
            Duration remaining = Duration.between(Instant.now(), deadline);
            assertTrue(!remaining.isNegative() && !remaining.isZero(),
                "received only " + received.size() + " of " + count + " messages: " + bodies(received));
            receiver.receiveMessages(count - received.size(), remaining).forEach(received::add);
        }
        assertEquals(count, received.size(), "asked for " + count + ", got " + bodies(received));
        return received;
    }

    static ServiceBusReceivedMessage receiveOne(ServiceBusReceiverClient receiver) {
        return receiveExactly(receiver, 1).get(0);
    }

    /** What arrives within `wait` (for checks that nothing does). */
    static List<ServiceBusReceivedMessage> receiveWithin(ServiceBusReceiverClient receiver, Duration wait) {
        List<ServiceBusReceivedMessage> received = new ArrayList<>();
        receiver.receiveMessages(10, wait).forEach(received::add);
        return received;
    }

    /** Every message the queue holds, peeked from its start by a fresh receiver. */
    List<ServiceBusReceivedMessage> peekAll(String queue) {
        try (ServiceBusReceiverClient peeker = receiver(queue)) {
            List<ServiceBusReceivedMessage> peeked = new ArrayList<>();
            peeker.peekMessages(100, 1).forEach(peeked::add);
            return peeked;
        }
    }

    /** A data body as text; other bodies (AMQP value, sequence) by their type. */
    static String text(ServiceBusReceivedMessage message) {
        AmqpMessageBodyType type = message.getRawAmqpMessage().getBody().getBodyType();
        return type == AmqpMessageBodyType.DATA ? message.getBody().toString() : "<" + type + " body>";
    }

    static List<String> bodies(List<ServiceBusReceivedMessage> messages) {
        return messages.stream().map(BrokerTest::text).toList();
    }

    /** Runs `action`, which must fail with a ServiceBusException of the given reason. */
    static ServiceBusException assertFailsWith(ServiceBusFailureReason reason, Executable action) {
        ServiceBusException error = assertThrows(ServiceBusException.class, action);
        assertEquals(reason, error.getReason(), () -> "the SDK reported " + describe(error));
        return error;
    }

    /** The condition of the first AmqpException among `error` and its causes. */
    static AmqpErrorCondition conditionOf(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof AmqpException amqp) {
                return amqp.getErrorCondition();
            }
        }
        return null;
    }

    /** The exception and its causes, for failure messages that tell what the broker answered. */
    static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            text.append(text.length() == 0 ? "" : " <- ").append(cause);
        }
        return text.toString();
    }
}
