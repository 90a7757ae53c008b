// Transactions as the Java SDK uses them: a send inside a committed transaction is delivered
// and one rolled back never is; a completion rolled back leaves the message locked where it was
// (the SDK will not settle that message object again, so the lock is run out on the broker's
// virtual clock and the message received anew); a receive, complete and send to another queue
// in one cross-entity transaction commit both or neither; a deferred message completed and a
// message scheduled inside a transaction change nothing until the commit; a transaction left
// open past Service Bus's two minutes (on the broker's virtual clock) is rolled back and its
// commit refused.
package busbar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusTransactionContext;
import com.azure.messaging.servicebus.models.CompleteOptions;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TransactionTest extends BrokerTest {
    @Override
    @BeforeAll
    void startBroker() throws Exception {
        broker = Broker.start("--test-controls");
        clients = newClientBuilder(1);
    }

    private void send(String queue, String body) {
        try (ServiceBusSenderClient sender = sender(queue)) {
            sender.sendMessage(new ServiceBusMessage(body));
        }
    }

    private List<String> peekedBodies(String queue) {
        return peekAll(queue).stream().map(message -> message.getBody().toString()).toList();
    }

    private static CompleteOptions in(ServiceBusTransactionContext transaction) {
        return new CompleteOptions().setTransactionContext(transaction);
    }

    @Test
    void aCommittedSendIsDeliveredAndARolledBackOneNeverIs() {
        try (ServiceBusSenderClient sender = sender("q-txn-send")) {
            ServiceBusTransactionContext rolledBack = sender.createTransaction();
            sender.sendMessage(new ServiceBusMessage("rolled back"), rolledBack);
            sender.rollbackTransaction(rolledBack);

            ServiceBusTransactionContext committed = sender.createTransaction();
            sender.sendMessage(new ServiceBusMessage("committed"), committed);
            assertEquals(List.of(), peekedBodies("q-txn-send"), "visible before the commit");
            sender.commitTransaction(committed);
        }
        assertEquals(List.of("committed"), peekedBodies("q-txn-send"));
    }

    @Test
    void aCompletionRolledBackLeavesTheMessageLockedWhereItWas() throws Exception {
        send("q-txn-complete", "work");
        try (ServiceBusReceiverClient receiver = receiver("q-txn-complete")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            ServiceBusTransactionContext transaction = receiver.createTransaction();
            receiver.complete(message, in(transaction));
            receiver.rollbackTransaction(transaction);
            assertEquals(List.of("work"), peekedBodies("q-txn-complete"));
            // Still locked by this receiver until the lock runs out, then delivered again.
            broker.ctl("clock", "advance", "2m");
            ServiceBusReceivedMessage again = receiveOne(receiver);
            assertEquals(message.getSequenceNumber(), again.getSequenceNumber());
            assertEquals(1, again.getDeliveryCount());
            receiver.complete(again);
        }
        assertEquals(List.of(), peekedBodies("q-txn-complete"));
    }

    @Test
    void receiveCompleteAndSendToAnotherQueueCommitBothOrNeither() throws Exception {
        ServiceBusClientBuilder crossEntity = newClientBuilder(1).enableCrossEntityTransactions();
        send("q-txn-in", "first");
        send("q-txn-in", "second");
        try (ServiceBusReceiverClient inbound = crossEntity.receiver().queueName("q-txn-in")
                .disableAutoComplete().buildClient();
             ServiceBusSenderClient outbound = crossEntity.sender().queueName("q-txn-out").buildClient()) {
            ServiceBusReceivedMessage first = receiveOne(inbound);
            ServiceBusTransactionContext rolledBack = inbound.createTransaction();
            inbound.complete(first, in(rolledBack));
            outbound.sendMessage(new ServiceBusMessage("shipped " + first.getBody()), rolledBack);
            inbound.rollbackTransaction(rolledBack);
            assertEquals(List.of(), peekedBodies("q-txn-out"), "neither");
            assertEquals(List.of("first", "second"), peekedBodies("q-txn-in"));

            broker.ctl("clock", "advance", "2m");
            ServiceBusReceivedMessage again = receiveOne(inbound);
            assertEquals("first", again.getBody().toString());
            ServiceBusTransactionContext committed = inbound.createTransaction();
            inbound.complete(again, in(committed));
            outbound.sendMessage(new ServiceBusMessage("shipped " + again.getBody()), committed);
            inbound.commitTransaction(committed);
        }
        assertEquals(List.of("shipped first"), peekedBodies("q-txn-out"), "both");
        assertEquals(List.of("second"), peekedBodies("q-txn-in"));
    }

    @Test
    void aDeferredMessageCompletedInsideATransactionGoesAtTheCommit() {
        send("q-txn-deferred", "later");
        try (ServiceBusReceiverClient receiver = receiver("q-txn-deferred")) {
            ServiceBusReceivedMessage message = receiveOne(receiver);
            receiver.defer(message);
            ServiceBusReceivedMessage deferred = receiver.receiveDeferredMessage(message.getSequenceNumber());
            ServiceBusTransactionContext transaction = receiver.createTransaction();
            // Settled through $management (update-disposition carrying the transaction).
            receiver.complete(deferred, in(transaction));
            assertEquals(List.of("later"), peekedBodies("q-txn-deferred"), "gone before the commit");
            receiver.commitTransaction(transaction);
        }
        assertEquals(List.of(), peekedBodies("q-txn-deferred"));
    }

    @Test
    void aScheduleInsideATransactionExistsOnlyOnceItCommits() {
        OffsetDateTime due = OffsetDateTime.now().plusHours(1);
        try (ServiceBusSenderClient sender = sender("q-txn-schedule")) {
            ServiceBusTransactionContext rolledBack = sender.createTransaction();
            sender.scheduleMessage(new ServiceBusMessage("never"), due, rolledBack);
            sender.rollbackTransaction(rolledBack);
            assertEquals(List.of(), peekedBodies("q-txn-schedule"));

            ServiceBusTransactionContext committed = sender.createTransaction();
            long sequence = sender.scheduleMessage(new ServiceBusMessage("later"), due, committed);
            assertEquals(List.of(), peekedBodies("q-txn-schedule"), "visible before the commit");
            sender.commitTransaction(committed);
            List<ServiceBusReceivedMessage> scheduled = peekAll("q-txn-schedule");
            assertEquals(List.of("later"), scheduled.stream().map(m -> m.getBody().toString()).toList());
            assertEquals(sequence, scheduled.get(0).getSequenceNumber());
            assertEquals(ServiceBusMessageState.SCHEDULED, scheduled.get(0).getState());
            sender.cancelScheduledMessage(sequence);
        }
        assertEquals(List.of(), peekedBodies("q-txn-schedule"));
    }

    @Test
    void aTransactionLeftOpenPastTheTimeoutIsRolledBack() throws Exception {
        try (ServiceBusSenderClient sender = sender("q-txn-timeout")) {
            ServiceBusTransactionContext transaction = sender.createTransaction();
            sender.sendMessage(new ServiceBusMessage("too late"), transaction);
            broker.ctl("clock", "advance", "3m");
            assertThrows(ServiceBusException.class, () -> sender.commitTransaction(transaction));
        }
        assertEquals(List.of(), peekedBodies("q-txn-timeout"));
    }
}
