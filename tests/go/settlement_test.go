// Peek-lock settlement: complete, abandon (redelivered with a higher delivery count),
// dead-letter with a reason and description (then read from the dead-letter sub-queue), and
// defer (then received by sequence number and completed).
package sdk

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestCompleteRemovesTheMessage(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-complete"), "done")
	receiver := newReceiver(t, client, "q-complete", nil)
	complete(t, receiver, receiveOne(t, receiver))
	requireBodies(t, peekAll(t, receiver))
}

func TestAbandonRedeliversWithAHigherDeliveryCount(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-abandon"), "again")
	receiver := newReceiver(t, client, "q-abandon", nil)
	first := receiveOne(t, receiver)
	requireEqual(t, "first DeliveryCount", first.DeliveryCount, 1)
	if err := receiver.AbandonMessage(testContext(t), first, nil); err != nil {
		t.Fatalf("AbandonMessage: %v", err)
	}
	second := receiveOne(t, receiver)
	requireEqual(t, "body", string(second.Body), "again")
	requireEqual(t, "DeliveryCount after abandon", second.DeliveryCount, 2)
	requireEqual(t, "SequenceNumber", *second.SequenceNumber, *first.SequenceNumber)
	complete(t, receiver, second)
}

func TestDeadLetterKeepsReasonAndDescription(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-dead-letter"), "poison")
	receiver := newReceiver(t, client, "q-dead-letter", nil)
	options := &azservicebus.DeadLetterOptions{
		Reason:           ptr("Unprocessable"),
		ErrorDescription: ptr("the order total is negative"),
	}
	if err := receiver.DeadLetterMessage(testContext(t), receiveOne(t, receiver), options); err != nil {
		t.Fatalf("DeadLetterMessage: %v", err)
	}
	requireBodies(t, peekAll(t, receiver))

	deadLetters := newReceiver(t, client, "q-dead-letter",
		&azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	message := receiveOne(t, deadLetters)
	requireEqual(t, "body", string(message.Body), "poison")
	if message.DeadLetterReason == nil || message.DeadLetterErrorDescription == nil {
		t.Fatalf("dead-lettered message lacks its reason (%v) or description (%v)",
			message.DeadLetterReason, message.DeadLetterErrorDescription)
	}
	requireEqual(t, "DeadLetterReason", *message.DeadLetterReason, "Unprocessable")
	requireEqual(t, "DeadLetterErrorDescription", *message.DeadLetterErrorDescription,
		"the order total is negative")
	complete(t, deadLetters, message)
	requireBodies(t, peekAll(t, deadLetters))
}

func TestDeferredMessageIsReceivedBySequenceNumber(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-defer"), "later", "now")
	receiver := newReceiver(t, client, "q-defer", nil)
	later := receiveOne(t, receiver)
	requireEqual(t, "first body", string(later.Body), "later")
	if err := receiver.DeferMessage(testContext(t), later, nil); err != nil {
		t.Fatalf("DeferMessage: %v", err)
	}
	// A deferred message is not delivered again by ReceiveMessages.
	now := receiveOne(t, receiver)
	requireEqual(t, "next body", string(now.Body), "now")
	complete(t, receiver, now)

	deferred, err := receiver.ReceiveDeferredMessages(testContext(t), []int64{*later.SequenceNumber}, nil)
	if err != nil {
		t.Fatalf("ReceiveDeferredMessages: %v", err)
	}
	requireBodies(t, deferred, "later")
	requireEqual(t, "State", deferred[0].State, azservicebus.MessageStateDeferred)
	complete(t, receiver, deferred[0])
	requireBodies(t, peekAll(t, receiver))
}
