// Sending and receiving on a queue: one message with its system properties, a batch in order,
// and receive-and-delete.
package sdk

import (
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestSendAndReceiveOneMessage(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sent := &azservicebus.Message{
		Body:          []byte("hello, busbar"),
		MessageID:     ptr("id-1"),
		Subject:       ptr("greeting"),
		ContentType:   ptr("text/plain"),
		CorrelationID: ptr("corr-1"),
		ReplyTo:       ptr("q-replies"),
	}
	if err := newSender(t, client, "q-send-receive").SendMessage(testContext(t), sent, nil); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	receiver := newReceiver(t, client, "q-send-receive", nil)
	message := receiveOne(t, receiver)
	requireEqual(t, "body", string(message.Body), "hello, busbar")
	requireEqual(t, "MessageID", message.MessageID, "id-1")
	requireEqual(t, "Subject", *message.Subject, "greeting")
	requireEqual(t, "ContentType", *message.ContentType, "text/plain")
	requireEqual(t, "CorrelationID", *message.CorrelationID, "corr-1")
	requireEqual(t, "ReplyTo", *message.ReplyTo, "q-replies")
	// The Go SDK counts the delivery in hand: 1 the first time.
	requireEqual(t, "DeliveryCount", message.DeliveryCount, 1)
	if message.SequenceNumber == nil || message.EnqueuedTime == nil || message.LockedUntil == nil {
		t.Fatalf("missing broker annotations: sequence %v, enqueued %v, locked until %v",
			message.SequenceNumber, message.EnqueuedTime, message.LockedUntil)
	}
	complete(t, receiver, message)
}

func TestSendAndReceiveABatch(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sender := newSender(t, client, "q-batch")
	batch, err := sender.NewMessageBatch(testContext(t), nil)
	if err != nil {
		t.Fatalf("NewMessageBatch: %v", err)
	}
	var want []string
	for n := range 10 {
		want = append(want, fmt.Sprintf("batch-%d", n))
		if err := batch.AddMessage(&azservicebus.Message{Body: []byte(want[n])}, nil); err != nil {
			t.Fatalf("AddMessage: %v", err)
		}
	}
	if err := sender.SendMessageBatch(testContext(t), batch, nil); err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	receiver := newReceiver(t, client, "q-batch", nil)
	received := receiveExactly(t, receiver, 10)
	requireBodies(t, received, want...)
	complete(t, receiver, received...)
	requireBodies(t, peekAll(t, receiver))
}

func TestReceiveAndDeleteRemovesOnDelivery(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-receive-delete"), "one", "two", "three")
	receiver := newReceiver(t, client, "q-receive-delete",
		&azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	requireBodies(t, receiveExactly(t, receiver, 3), "one", "two", "three")
	requireBodies(t, peekAll(t, newReceiver(t, client, "q-receive-delete", nil)))
}
