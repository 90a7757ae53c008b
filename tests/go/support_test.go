// Helpers shared by the tests: a client per test, a bounded context, senders and receivers
// closed after the test, receiving an exact number of messages, peeking, and checking the SDK's
// error codes.
package sdk

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// guard bounds every wait for an outcome that should come; tests go on as soon as it is in.
const guard = 30 * time.Second

// retries keeps a failing operation from retrying with the SDK's default multi-second backoff.
var retries = azservicebus.RetryOptions{
	MaxRetries:    2,
	RetryDelay:    100 * time.Millisecond,
	MaxRetryDelay: time.Second,
}

func ptr[T any](value T) *T { return &value }

// newClient connects to the package's broker; each test has its own, so that one test's broken
// connection does not fail another.
func newClient(t *testing.T) *azservicebus.Client {
	t.Helper()
	return newClientWith(t, retries)
}

// newSingleTryClient never retries: it reports what the broker answered rather than what the
// SDK's recovery (re-attaching a link, re-accepting a session) makes of it.
func newSingleTryClient(t *testing.T) *azservicebus.Client {
	t.Helper()
	return newClientWith(t, azservicebus.RetryOptions{MaxRetries: -1})
}

func newClientWith(t *testing.T, retryOptions azservicebus.RetryOptions) *azservicebus.Client {
	t.Helper()
	client, err := azservicebus.NewClientFromConnectionString(connectionString,
		&azservicebus.ClientOptions{RetryOptions: retryOptions})
	if err != nil {
		t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	return client
}

// testContext is cancelled after guard or when the test ends.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

func newSender(t *testing.T, client *azservicebus.Client, queueOrTopic string) *azservicebus.Sender {
	t.Helper()
	sender, err := client.NewSender(queueOrTopic, nil)
	if err != nil {
		t.Fatalf("NewSender(%s): %v", queueOrTopic, err)
	}
	t.Cleanup(func() { _ = sender.Close(context.Background()) })
	return sender
}

func newReceiver(t *testing.T, client *azservicebus.Client, queue string, options *azservicebus.ReceiverOptions) *azservicebus.Receiver {
	t.Helper()
	receiver, err := client.NewReceiverForQueue(queue, options)
	if err != nil {
		t.Fatalf("NewReceiverForQueue(%s): %v", queue, err)
	}
	t.Cleanup(func() { _ = receiver.Close(context.Background()) })
	return receiver
}

func newSubscriptionReceiver(t *testing.T, client *azservicebus.Client, topic, subscription string) *azservicebus.Receiver {
	t.Helper()
	receiver, err := client.NewReceiverForSubscription(topic, subscription, nil)
	if err != nil {
		t.Fatalf("NewReceiverForSubscription(%s, %s): %v", topic, subscription, err)
	}
	t.Cleanup(func() { _ = receiver.Close(context.Background()) })
	return receiver
}

// sendTexts sends one message per text, each acknowledged before the next.
func sendTexts(t *testing.T, sender *azservicebus.Sender, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if err := sender.SendMessage(testContext(t), &azservicebus.Message{Body: []byte(text)}, nil); err != nil {
			t.Fatalf("SendMessage(%q): %v", text, err)
		}
	}
}

// messageReceiver is what Receiver and SessionReceiver have in common for receiving.
type messageReceiver interface {
	ReceiveMessages(ctx context.Context, maxMessages int, options *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
}

// receiveExactly receives until count messages arrived (a single ReceiveMessages call returns
// shortly after the first message, so gathering several may take more calls).
func receiveExactly(t *testing.T, receiver messageReceiver, count int) []*azservicebus.ReceivedMessage {
	t.Helper()
	ctx := testContext(t)
	var received []*azservicebus.ReceivedMessage
	for len(received) < count {
		batch, err := receiver.ReceiveMessages(ctx, count-len(received), nil)
		if err != nil {
			t.Fatalf("received %d of %d messages %q, then: %v", len(received), count, bodies(received), err)
		}
		received = append(received, batch...)
	}
	if len(received) != count {
		t.Fatalf("asked for %d messages, got %q", count, bodies(received))
	}
	return received
}

func receiveOne(t *testing.T, receiver messageReceiver) *azservicebus.ReceivedMessage {
	t.Helper()
	return receiveExactly(t, receiver, 1)[0]
}

// peekAll returns every message the receiver's entity holds, from the first sequence number.
func peekAll(t *testing.T, receiver *azservicebus.Receiver) []*azservicebus.ReceivedMessage {
	t.Helper()
	peeked, err := receiver.PeekMessages(testContext(t), 100,
		&azservicebus.PeekMessagesOptions{FromSequenceNumber: ptr(int64(1))})
	if err != nil {
		t.Fatalf("PeekMessages: %v", err)
	}
	return peeked
}

func bodies(messages []*azservicebus.ReceivedMessage) []string {
	texts := make([]string, len(messages))
	for i, message := range messages {
		texts[i] = string(message.Body)
	}
	return texts
}

func complete(t *testing.T, settler interface {
	CompleteMessage(context.Context, *azservicebus.ReceivedMessage, *azservicebus.CompleteMessageOptions) error
}, messages ...*azservicebus.ReceivedMessage) {
	t.Helper()
	for _, message := range messages {
		if err := settler.CompleteMessage(testContext(t), message, nil); err != nil {
			t.Fatalf("CompleteMessage(%q): %v", message.Body, err)
		}
	}
}

// requireCode fails unless err is an *azservicebus.Error with the given code.
func requireCode(t *testing.T, err error, code azservicebus.Code, operation string) {
	t.Helper()
	var sbErr *azservicebus.Error
	if !errors.As(err, &sbErr) || sbErr.Code != code {
		t.Fatalf("%s: want an *azservicebus.Error with code %q, got %T: %v", operation, code, err, err)
	}
}

func requireEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func requireBodies(t *testing.T, messages []*azservicebus.ReceivedMessage, want ...string) {
	t.Helper()
	if got := bodies(messages); !slices.Equal(got, want) {
		t.Fatalf("bodies: got %q, want %q", got, want)
	}
}
