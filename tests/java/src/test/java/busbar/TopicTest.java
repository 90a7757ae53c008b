// Topic fan-out through the filters configured in Config.json for t-filters: "all" has no rules
// (every message), "red" a SQL filter (color = 'red' AND quantity > 5), "orders" a correlation
// filter (Label "order" and property priority = "high").
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TopicTest extends BrokerTest {
    private Set<String> drain(String subscription, int expected) {
        try (ServiceBusReceiverClient receiver = clients.receiver().topicName("t-filters")
                .subscriptionName(subscription).receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE)
                .buildClient()) {
            Set<String> received = new TreeSet<>(bodies(receiveExactly(receiver, expected)));
            List<ServiceBusReceivedMessage> extra = receiveWithin(receiver, Duration.ofSeconds(1));
            assertEquals(List.of(), bodies(extra), subscription + " got more than expected");
            return received;
        }
    }

    /** A message with a subject (Label) and application properties given as name, value, ... */
    private static ServiceBusMessage message(String body, String subject, Object... properties) {
        ServiceBusMessage message = new ServiceBusMessage(body).setSubject(subject);
        for (int i = 0; i < properties.length; i += 2) {
            message.getApplicationProperties().put((String) properties[i], properties[i + 1]);
        }
        return message;
    }

    @Test
    void everySubscriptionGetsTheCopiesItsRulesSelect() {
        try (ServiceBusSenderClient sender = clients.sender().topicName("t-filters").buildClient()) {
            sender.sendMessage(message("red-many", null, "color", "red", "quantity", 10));
            sender.sendMessage(message("red-few", null, "color", "red", "quantity", 2));
            sender.sendMessage(message("blue-many", null, "color", "blue", "quantity", 10));
            sender.sendMessage(message("urgent-order", "order", "priority", "high"));
            sender.sendMessage(message("routine-order", "order", "priority", "low"));
        }
        assertEquals(Set.of("red-many", "red-few", "blue-many", "urgent-order", "routine-order"),
            drain("all", 5));
        assertEquals(Set.of("red-many"), drain("red", 1));
        assertEquals(Set.of("urgent-order"), drain("orders", 1));
    }
}
