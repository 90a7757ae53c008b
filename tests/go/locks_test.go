// Message locks on a queue with a 5 s LockDuration: renewing keeps the message past its first
// expiry; an expired lock redelivers the message with a higher delivery count and the stale
// lock can no longer settle it. These tests wait for real lock expiries.
package sdk

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestRenewMessageLockKeepsTheMessagePastItsFirstExpiry(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-lock-renew"), "long job")
	receiver := newReceiver(t, client, "q-lock-renew", nil)
	message := receiveOne(t, receiver)
	firstExpiry := *message.LockedUntil
	// Half-way through the lock, renew it: the new expiry is a full lock duration from now.
	time.Sleep(time.Until(firstExpiry) / 2)
	if err := receiver.RenewMessageLock(testContext(t), message, nil); err != nil {
		t.Fatalf("RenewMessageLock: %v", err)
	}
	if !message.LockedUntil.After(firstExpiry) {
		t.Fatalf("LockedUntil after renewal %v is not after %v", message.LockedUntil, firstExpiry)
	}
	time.Sleep(time.Until(firstExpiry) + 500*time.Millisecond)
	complete(t, receiver, message)
	requireBodies(t, peekAll(t, receiver))
}

func TestAnExpiredLockRedeliversTheMessage(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendTexts(t, newSender(t, client, "q-lock-expiry"), "slow")
	receiver := newReceiver(t, client, "q-lock-expiry", nil)
	stale := receiveOne(t, receiver)
	requireEqual(t, "first DeliveryCount", stale.DeliveryCount, 1)
	// Nothing settles or renews it: the next receive gets it once the 5 s lock expires.
	again := receiveOne(t, receiver)
	if time.Now().Before(*stale.LockedUntil) {
		t.Fatalf("redelivered at %v, before the first lock expired at %v", time.Now(), *stale.LockedUntil)
	}
	requireEqual(t, "body", string(again.Body), "slow")
	requireEqual(t, "SequenceNumber", *again.SequenceNumber, *stale.SequenceNumber)
	requireEqual(t, "DeliveryCount after expiry", again.DeliveryCount, 2)
	err := receiver.CompleteMessage(testContext(t), stale, nil)
	requireCode(t, err, azservicebus.CodeLockLost, "CompleteMessage with the expired lock")
	complete(t, receiver, again)
}
