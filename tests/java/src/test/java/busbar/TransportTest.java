// The transports with a production-style connection string (no port, no UseDevelopmentEmulator):
// AMQP over TLS (AmqpTransportType.AMQP) and AMQP over WebSockets (AMQP_WEB_SOCKETS, which the SDK
// opens as GET /$servicebus/websocket with the AMQPWSB10 subprotocol over TLS), each sending,
// receiving with PeekLock and completing; and one port serving AMQPS, WebSockets and the
// ServiceBusAdministrationClient's https at once, for each of the broker's ports.
//
// The broker's development CA is trusted as a user would: a trust store holding it becomes the
// JVM's default (SSLContext.setDefault, which the AMQP transports use, and the javax.net.ssl
// properties, which the admin client's Netty uses). The SDK dials the connection string's host
// (port 5671 for AMQP, 443 for WebSockets); customEndpointAddress points it at the broker's port.
// The administration client has no such option and always dials https on port 443: a pipeline
// policy puts the broker's port into each request's https URL.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.AmqpTransportType;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

class TransportTest extends BrokerTest {
    /** Shaped as the Azure portal gives it. */
    private static final String PRODUCTION_CONNECTION_STRING = "Endpoint=sb://localhost/;"
        + "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE";
    private static final List<String> TRUST_STORE_PROPERTIES = List.of("javax.net.ssl.trustStore",
        "javax.net.ssl.trustStoreType", "javax.net.ssl.trustStorePassword");

    private Path trustStore;
    private SSLContext previousDefault;
    private final List<String> previousProperties = new ArrayList<>();

    /** Makes a trust store holding only the broker's CA the JVM's default. */
    @BeforeAll
    void trustTheBrokersCa() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        try (InputStream pem = Files.newInputStream(broker.caFile)) {
            store.setCertificateEntry("busbar-ca",
                CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        char[] password = "busbar".toCharArray();
        trustStore = Files.createTempFile("busbar-ca-", ".p12");
        try (OutputStream out = Files.newOutputStream(trustStore)) {
            store.store(out, password);
        }
        TRUST_STORE_PROPERTIES.forEach(name -> previousProperties.add(System.getProperty(name)));
        System.setProperty("javax.net.ssl.trustStore", trustStore.toString());
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        System.setProperty("javax.net.ssl.trustStorePassword", new String(password));

        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(store);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        previousDefault = SSLContext.getDefault();
        SSLContext.setDefault(context);
    }

    @AfterAll
    void restoreTheDefaultTrust() throws Exception {
        if (previousDefault != null) {
            SSLContext.setDefault(previousDefault);
        }
        for (int i = 0; i < previousProperties.size(); i++) {
            String previous = previousProperties.get(i);
            if (previous == null) {
                System.clearProperty(TRUST_STORE_PROPERTIES.get(i));
            } else {
                System.setProperty(TRUST_STORE_PROPERTIES.get(i), previous);
            }
        }
        if (trustStore != null) {
            Files.deleteIfExists(trustStore);
        }
    }

    /** A builder with its own connection over `transport` to the broker's `port`. */
    private static ServiceBusClientBuilder productionClients(AmqpTransportType transport, int port) {
        return new ServiceBusClientBuilder()
            .connectionString(PRODUCTION_CONNECTION_STRING)
            .customEndpointAddress("https://localhost:" + port)
            .transportType(transport)
            .retryOptions(new AmqpRetryOptions()
                .setMaxRetries(1)
                .setDelay(Duration.ofMillis(100))
                .setMaxDelay(Duration.ofSeconds(1))
                .setTryTimeout(Duration.ofSeconds(10)));
    }

    /**
     * Sends two messages to `queue`, receives them with PeekLock, completes them, and checks that
     * the queue is left empty, all through `clients`.
     */
    private static void sendReceiveComplete(ServiceBusClientBuilder clients, String queue) {
        try (ServiceBusSenderClient sender = clients.sender().queueName(queue).buildClient()) {
            sender.sendMessages(List.of(new ServiceBusMessage("first"), new ServiceBusMessage("second")));
        }
        try (ServiceBusReceiverClient receiver = clients.receiver().queueName(queue)
                .maxAutoLockRenewDuration(Duration.ZERO).buildClient()) {
            List<ServiceBusReceivedMessage> received = receiveExactly(receiver, 2);
            assertEquals(List.of("first", "second"), bodies(received));
            for (ServiceBusReceivedMessage message : received) {
                assertNotNull(message.getLockToken(), "received without a lock (not PeekLock)");
                receiver.complete(message);
            }
            List<ServiceBusReceivedMessage> left = new ArrayList<>();
            receiver.peekMessages(100, 1).forEach(left::add);
            assertEquals(List.of(), bodies(left), "the queue still holds messages after completing");
        }
    }

    @Test
    void amqpsSendsReceivesAndCompletes() {
        sendReceiveComplete(productionClients(AmqpTransportType.AMQP, broker.amqpsPort), "q-transport-amqps");
    }

    @Test
    void webSocketsSendReceiveAndComplete() {
        sendReceiveComplete(productionClients(AmqpTransportType.AMQP_WEB_SOCKETS, broker.amqpsPort),
            "q-transport-websockets");
    }

    /**
     * One of the broker's ports for everything: the admin client creates a queue over https there,
     * AMQPS and WebSocket clients send, receive and complete there, and the admin client then finds
     * the queue empty.
     */
    @ParameterizedTest(name = "the {0} port")
    @ValueSource(strings = {"amqp", "amqps", "admin"})
    void onePortServesAmqpsWebSocketsAndTheAdministrationApi(String which) {
        int port = switch (which) {
            case "amqp" -> broker.port;
            case "amqps" -> broker.amqpsPort;
            default -> broker.adminPort;
        };
        String queue = "java-transport-one-port-" + which;
        ServiceBusAdministrationClient admin = httpsAdminClient(port);
        admin.createQueue(queue);
        try {
            sendReceiveComplete(productionClients(AmqpTransportType.AMQP, port), queue);
            sendReceiveComplete(productionClients(AmqpTransportType.AMQP_WEB_SOCKETS, port), queue);
            QueueRuntimeProperties runtime = admin.getQueueRuntimeProperties(queue);
            assertEquals(0, runtime.getActiveMessageCount());
            assertEquals(0, runtime.getTotalMessageCount());
        } finally {
            admin.deleteQueue(queue);
        }
    }

    /** The administration client over https (the SDK's scheme) to the broker's `port`. */
    private static ServiceBusAdministrationClient httpsAdminClient(int port) {
        HttpPipelinePolicy toPort = (context, next) -> {
            try {
                URL current = context.getHttpRequest().getUrl();
                if (!current.getProtocol().equals("https")) {
                    return Mono.error(new IllegalStateException("the admin client asked for " + current));
                }
                context.getHttpRequest().setUrl(new URL("https", current.getHost(), port, current.getFile()));
            } catch (MalformedURLException error) {
                return Mono.error(error);
            }
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder()
            .connectionString(PRODUCTION_CONNECTION_STRING)
            .addPolicy(toPort)
            .buildClient();
    }
}
