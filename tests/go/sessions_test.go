// Message sessions: FIFO within each session while sessions interleave, a named session and the
// next available ones, session state, renewing the session lock, losing it on expiry, and
// listing the sessions of a queue. Every queue here has RequiresSession.
package sdk

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// sendToSessions sends (session id, body) pairs in the order given.
func sendToSessions(t *testing.T, client *azservicebus.Client, queue string, pairs ...[2]string) {
	t.Helper()
	sender := newSender(t, client, queue)
	for _, pair := range pairs {
		message := &azservicebus.Message{SessionID: ptr(pair[0]), Body: []byte(pair[1])}
		if err := sender.SendMessage(testContext(t), message, nil); err != nil {
			t.Fatalf("SendMessage(%v): %v", pair, err)
		}
	}
}

func acceptSession(t *testing.T, client *azservicebus.Client, queue, session string) *azservicebus.SessionReceiver {
	t.Helper()
	receiver, err := client.AcceptSessionForQueue(testContext(t), queue, session, nil)
	if err != nil {
		t.Fatalf("AcceptSessionForQueue(%s, %s): %v", queue, session, err)
	}
	t.Cleanup(func() { _ = receiver.Close(context.Background()) })
	return receiver
}

func acceptNextSession(t *testing.T, client *azservicebus.Client, queue string) *azservicebus.SessionReceiver {
	t.Helper()
	receiver, err := client.AcceptNextSessionForQueue(testContext(t), queue, nil)
	if err != nil {
		t.Fatalf("AcceptNextSessionForQueue(%s): %v", queue, err)
	}
	t.Cleanup(func() { _ = receiver.Close(context.Background()) })
	return receiver
}

func TestEachSessionIsDeliveredInOrder(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	var pairs [][2]string
	for n := range 12 {
		pairs = append(pairs, [2]string{fmt.Sprintf("s-%d", n%3), fmt.Sprintf("%d:%d", n%3, n/3)})
	}
	sendToSessions(t, client, "q-session-fifo", pairs...)
	for session := range 3 {
		id := fmt.Sprintf("s-%d", session)
		receiver := acceptSession(t, client, "q-session-fifo", id)
		requireEqual(t, "SessionID", receiver.SessionID(), id)
		received := receiveExactly(t, receiver, 4)
		var want []string
		for k := range 4 {
			want = append(want, fmt.Sprintf("%d:%d", session, k))
		}
		requireBodies(t, received, want...)
		for _, message := range received {
			requireEqual(t, "message SessionID", *message.SessionID, id)
		}
		complete(t, receiver, received...)
	}
}

func TestAcceptNextSessionGetsEachSessionOnce(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendToSessions(t, client, "q-session-next", [2]string{"a", "a1"}, [2]string{"b", "b1"})
	first := acceptNextSession(t, client, "q-session-next")
	second := acceptNextSession(t, client, "q-session-next")
	sessions := []string{first.SessionID(), second.SessionID()}
	slices.Sort(sessions)
	if !slices.Equal(sessions, []string{"a", "b"}) {
		t.Fatalf("accepted sessions %q, want a and b", sessions)
	}
	for _, receiver := range []*azservicebus.SessionReceiver{first, second} {
		message := receiveOne(t, receiver)
		requireEqual(t, "body", string(message.Body), receiver.SessionID()+"1")
		complete(t, receiver, message)
	}
}

func TestSessionStateIsSetAndRead(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendToSessions(t, client, "q-session-state", [2]string{"s", "m"})
	receiver := acceptSession(t, client, "q-session-state", "s")
	requireState := func(want []byte) {
		t.Helper()
		state, err := receiver.GetSessionState(testContext(t), nil)
		if err != nil {
			t.Fatalf("GetSessionState: %v", err)
		}
		if !slices.Equal(state, want) {
			t.Fatalf("session state %q, want %q", state, want)
		}
	}
	requireState(nil)
	for _, state := range [][]byte{[]byte("step-1"), {0, 'c', 0xff}, nil} {
		if err := receiver.SetSessionState(testContext(t), state, nil); err != nil {
			t.Fatalf("SetSessionState(%q): %v", state, err)
		}
		requireState(state)
	}
	complete(t, receiver, receiveOne(t, receiver))
}

func TestRenewSessionLockExtendsIt(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendToSessions(t, client, "q-session-renew", [2]string{"s", "m"})
	receiver := acceptSession(t, client, "q-session-renew", "s")
	first := receiver.LockedUntil()
	if first.IsZero() {
		t.Fatal("the accepted session has no LockedUntil")
	}
	message := receiveOne(t, receiver)
	// Renewed half-way through its 5 s, the lock ends a full lock duration from the renewal.
	time.Sleep(time.Until(first) / 2)
	if err := receiver.RenewSessionLock(testContext(t), nil); err != nil {
		t.Fatalf("RenewSessionLock: %v", err)
	}
	if renewed := receiver.LockedUntil(); !renewed.After(first) {
		t.Fatalf("LockedUntil after renewal %v is not after %v", renewed, first)
	}
	complete(t, receiver, message)
}

func TestAnExpiredSessionLockIsLost(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendToSessions(t, client, "q-session-expiry", [2]string{"s", "slow"})
	// With retries the SDK would re-accept the session once the lock is lost; a single try
	// shows the loss itself.
	holder := acceptSession(t, newSingleTryClient(t), "q-session-expiry", "s")
	stale := receiveOne(t, holder)
	requireEqual(t, "first DeliveryCount", stale.DeliveryCount, 1)
	// Nothing renews the 5 s session lock.
	time.Sleep(time.Until(holder.LockedUntil()) + 250*time.Millisecond)
	err := holder.RenewSessionLock(testContext(t), nil)
	requireCode(t, err, azservicebus.CodeLockLost, "RenewSessionLock after expiry")
	// The session is free again, and the message it held counts a delivery.
	successor := acceptNextSession(t, client, "q-session-expiry")
	requireEqual(t, "successor SessionID", successor.SessionID(), "s")
	message := receiveOne(t, successor)
	requireEqual(t, "body", string(message.Body), "slow")
	requireEqual(t, "DeliveryCount after expiry", message.DeliveryCount, 2)
	complete(t, successor, message)
}

func TestListSessionsNamesThoseWithMessages(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sendToSessions(t, client, "q-session-listing", [2]string{"orders", "o1"}, [2]string{"billing", "b1"})
	var sessions []string
	pager := client.NewListSessionsForQueuePager("q-session-listing", nil)
	for pager.More() {
		page, err := pager.NextPage(testContext(t))
		if err != nil {
			t.Fatalf("listing sessions: %v", err)
		}
		sessions = append(sessions, page.Sessions...)
	}
	slices.Sort(sessions)
	if !slices.Equal(sessions, []string{"billing", "orders"}) {
		t.Fatalf("listed sessions %q, want billing and orders", sessions)
	}
}
