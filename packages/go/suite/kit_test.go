// The Go test kit in a fresh module: the package's broker with the official SDK (send and
// receive over AMQP and AMQPS, a session, a dead-letter, a schedule brought due by the clock, a
// fault raised and retried), reset between tests, and a broker of a test's own.
package kitsuite

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/busbar-rs/busbar/packages/go/busbartest"
)

var shared *busbartest.Broker

func TestMain(m *testing.M) { os.Exit(busbartest.Main(m, nil, &shared)) }

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func client(t *testing.T, connectionString string, options *azservicebus.ClientOptions) *azservicebus.Client {
	c, err := azservicebus.NewClientFromConnectionString(connectionString, options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func send(t *testing.T, c *azservicebus.Client, queue string, message *azservicebus.Message) error {
	sender, err := c.NewSender(queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	return sender.SendMessage(timeout(t), message, nil)
}

// messageSource is a receiver, or a session receiver.
type messageSource interface {
	ReceiveMessages(context.Context, int, *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
}

func receive(t *testing.T, receiver messageSource, count int) []*azservicebus.ReceivedMessage {
	var received []*azservicebus.ReceivedMessage
	ctx := timeout(t)
	for len(received) < count {
		messages, err := receiver.ReceiveMessages(ctx, count-len(received), nil)
		if err != nil {
			t.Fatalf("received %d of %d: %v", len(received), count, err)
		}
		received = append(received, messages...)
	}
	return received
}

func receiveOne(t *testing.T, c *azservicebus.Client, queue string, options *azservicebus.ReceiverOptions) *azservicebus.ReceivedMessage {
	receiver, err := c.NewReceiverForQueue(queue, options)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close(context.Background())
	message := receive(t, receiver, 1)[0]
	if err := receiver.CompleteMessage(timeout(t), message, nil); err != nil {
		t.Fatal(err)
	}
	return message
}

func expect(t *testing.T, what string, got, want any) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func TestSendAndReceiveOverAMQPAndAMQPS(t *testing.T) {
	broker := shared.ForTest(t)
	plain := client(t, broker.ConnectionString(), nil)
	if err := send(t, plain, "queue.1", &azservicebus.Message{Body: []byte("plain")}); err != nil {
		t.Fatal(err)
	}
	expect(t, "body", string(receiveOne(t, plain, "queue.1", nil).Body), "plain")

	trust, err := broker.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	tls := client(t, broker.ProductionConnectionString(),
		&azservicebus.ClientOptions{CustomEndpoint: broker.AMQPSEndpoint(), TLSConfig: trust})
	if err := send(t, tls, "queue.1", &azservicebus.Message{Body: []byte("over tls")}); err != nil {
		t.Fatal(err)
	}
	expect(t, "body", string(receiveOne(t, tls, "queue.1", nil).Body), "over tls")
}

func TestASessionQueueCreatedForTheTest(t *testing.T) {
	broker := shared.ForTest(t)
	if err := broker.CreateQueue("orders", map[string]any{"RequiresSession": true}); err != nil {
		t.Fatal(err)
	}
	c := client(t, broker.ConnectionString(), nil)
	session := "cart-7"
	for _, body := range []string{"step 1", "step 2"} {
		if err := send(t, c, "orders", &azservicebus.Message{Body: []byte(body), SessionID: &session}); err != nil {
			t.Fatal(err)
		}
	}
	receiver, err := c.AcceptSessionForQueue(timeout(t), "orders", session, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close(context.Background())
	messages := receive(t, receiver, 2)
	expect(t, "first", string(messages[0].Body), "step 1")
	expect(t, "second", string(messages[1].Body), "step 2")
	if err := receiver.SetSessionState(timeout(t), []byte("paid"), nil); err != nil {
		t.Fatal(err)
	}
	state, err := receiver.GetSessionState(timeout(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "state", string(state), "paid")
}

func TestADeadLetter(t *testing.T) {
	broker := shared.ForTest(t)
	c := client(t, broker.ConnectionString(), nil)
	if err := send(t, c, "queue.1", &azservicebus.Message{Body: []byte("poison")}); err != nil {
		t.Fatal(err)
	}
	receiver, err := c.NewReceiverForQueue("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	reason := "bad"
	message := receive(t, receiver, 1)[0]
	if err := receiver.DeadLetterMessage(timeout(t), message, &azservicebus.DeadLetterOptions{Reason: &reason}); err != nil {
		t.Fatal(err)
	}
	receiver.Close(context.Background())
	dead := receiveOne(t, c, "queue.1", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	expect(t, "body", string(dead.Body), "poison")
	expect(t, "reason", *dead.DeadLetterReason, "bad")
}

func TestAMessageScheduledAnHourAheadIsBroughtDueByTheClock(t *testing.T) {
	broker := shared.ForTest(t)
	c := client(t, broker.ConnectionString(), nil)
	sender, err := c.NewSender("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	due := time.Now().Add(time.Hour)
	if _, err := sender.ScheduleMessages(timeout(t), []*azservicebus.Message{{Body: []byte("later")}}, due, nil); err != nil {
		t.Fatal(err)
	}
	if err := broker.AdvanceClock(61 * time.Minute); err != nil { // queue.1's messages live an hour
		t.Fatal(err)
	}
	expect(t, "body", string(receiveOne(t, c, "queue.1", nil).Body), "later")
}

func TestAFaultIsRaisedWithoutRetriesAndRetriedAwayWithThem(t *testing.T) {
	broker := shared.ForTest(t)
	if err := broker.Fault("queue.1", "server-busy", 1); err != nil {
		t.Fatal(err)
	}
	strict := client(t, broker.ConnectionString(), &azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	err := send(t, strict, "queue.1", &azservicebus.Message{Body: []byte("refused")})
	if err == nil || !strings.Contains(err.Error(), "com.microsoft:server-busy") {
		t.Fatalf("the send was not refused with server-busy: %v", err)
	}
	if err := broker.Fault("queue.1", "server-busy", 1); err != nil {
		t.Fatal(err)
	}
	retrying := client(t, broker.ConnectionString(), &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{RetryDelay: 100 * time.Millisecond}})
	if err := send(t, retrying, "queue.1", &azservicebus.Message{Body: []byte("retried")}); err != nil {
		t.Fatal(err)
	}
	expect(t, "body", string(receiveOne(t, retrying, "queue.1", nil).Body), "retried")
}

// The two reset tests run in this order (go test runs a file's tests in source order).
func TestResetFirstATestLeavesAMessageAndAQueue(t *testing.T) {
	broker := shared.ForTest(t)
	if err := broker.CreateQueue("left-over", nil); err != nil {
		t.Fatal(err)
	}
	if err := send(t, client(t, broker.ConnectionString(), nil), "queue.1", &azservicebus.Message{Body: []byte("left")}); err != nil {
		t.Fatal(err)
	}
}

func TestResetThenTheNextTestStartsEmpty(t *testing.T) {
	broker := shared.ForTest(t)
	receiver, err := client(t, broker.ConnectionString(), nil).NewReceiverForQueue("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close(context.Background())
	peeked, err := receiver.PeekMessages(timeout(t), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "messages left", len(peeked), 0)
	if _, err := broker.Purge("left-over", false); err == nil {
		t.Fatal("the queue made by the previous test is still there")
	}
}

func TestABrokerOfItsOwnWithFileStorageAndAConfig(t *testing.T) {
	config := map[string]any{"UserConfig": map[string]any{
		"Namespaces": []any{map[string]any{"Name": "sbemulatorns", "Topics": []any{},
			"Queues": []any{map[string]any{"Name": "jobs", "Properties": map[string]any{"MaxDeliveryCount": 1}}}}},
		"Logging": map[string]any{"Type": "Console"}}}
	own := busbartest.Start(t, &busbartest.Options{Storage: "file", Config: config})
	if err := send(t, client(t, own.ConnectionString(), nil), "jobs", &azservicebus.Message{Body: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	purged, err := own.Purge("jobs", false)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "purged", purged, 1)
}
