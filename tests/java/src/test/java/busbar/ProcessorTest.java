// ServiceBusProcessorClient: a processor that completes every message it is handed, and the
// session processor (sessionProcessor()), which sees each session's messages in order.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusErrorContext;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ProcessorTest extends BrokerTest {
    private static final int COUNT = 20;

    private final List<String> errors = Collections.synchronizedList(new ArrayList<>());

    private void recordError(ServiceBusErrorContext context) {
        errors.add(context.getErrorSource() + ": " + describe(context.getException()));
    }

    private static void await(CountDownLatch done, List<String> errors) throws InterruptedException {
        assertTrue(done.await(RECEIVE_GUARD.toSeconds(), TimeUnit.SECONDS),
            done.getCount() + " messages never reached the processor; its errors: " + errors);
    }

    @Test
    void aProcessorCompletesEveryMessage() throws InterruptedException {
        List<String> sent = IntStream.range(0, COUNT).mapToObj(i -> "work-" + i).toList();
        try (ServiceBusSenderClient sender = sender("q-processor")) {
            sender.sendMessages(sent.stream().map(ServiceBusMessage::new).toList());
        }
        List<String> processed = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(COUNT);
        ServiceBusProcessorClient processor = clients.processor().queueName("q-processor")
            .disableAutoComplete()
            .maxConcurrentCalls(2)
            .processMessage(context -> {
                context.complete();
                processed.add(text(context.getMessage()));
                done.countDown();
            })
            .processError(this::recordError)
            .buildProcessorClient();
        processor.start();
        try {
            await(done, errors);
        } finally {
            processor.close();
        }
        assertEquals(COUNT, processed.size(), "processed " + processed);
        assertEquals(new HashSet<>(sent), new HashSet<>(processed));
        assertEquals(List.of(), peekAll("q-processor"));
    }

    @Test
    void aSessionProcessorSeesEachSessionInOrder() throws InterruptedException {
        try (ServiceBusSenderClient sender = sender("q-session-processor")) {
            for (int i = 0; i < COUNT / 2; i++) {
                for (String session : List.of("left", "right")) {
                    sender.sendMessage(new ServiceBusMessage(session + "-" + i).setSessionId(session));
                }
            }
        }
        Map<String, List<String>> bySession = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(COUNT);
        ServiceBusProcessorClient processor = clients.sessionProcessor().queueName("q-session-processor")
            .maxConcurrentSessions(2)
            .disableAutoComplete()
            .processMessage(context -> {
                ServiceBusReceivedMessage message = context.getMessage();
                context.complete();
                bySession.computeIfAbsent(message.getSessionId(), id -> Collections.synchronizedList(new ArrayList<>()))
                    .add(text(message));
                done.countDown();
            })
            .processError(this::recordError)
            .buildProcessorClient();
        processor.start();
        try {
            await(done, errors);
        } finally {
            processor.close();
        }
        for (String session : List.of("left", "right")) {
            assertEquals(IntStream.range(0, COUNT / 2).mapToObj(i -> session + "-" + i).toList(),
                bySession.get(session), session);
        }
    }
}
