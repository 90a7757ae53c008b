// Scheduled messages through a queue's and a topic's sender: ScheduleMessages returns sequence
// numbers, CancelScheduledMessages withdraws one, and the other arrives once it is due.
package sdk

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// scheduleTwoCancelOne schedules "cancelled" a second ahead and "due" two seconds ahead,
// cancels the former, and returns when "due" is due. Were the cancellation lost, "cancelled"
// would arrive first.
func scheduleTwoCancelOne(t *testing.T, sender *azservicebus.Sender) time.Time {
	t.Helper()
	start := time.Now()
	schedule := func(body string, at time.Time) int64 {
		t.Helper()
		sequence, err := sender.ScheduleMessages(testContext(t),
			[]*azservicebus.Message{{Body: []byte(body)}}, at, nil)
		if err != nil {
			t.Fatalf("ScheduleMessages(%s): %v", body, err)
		}
		if len(sequence) != 1 {
			t.Fatalf("ScheduleMessages(%s) returned sequence numbers %v", body, sequence)
		}
		return sequence[0]
	}
	cancelled := schedule("cancelled", start.Add(time.Second))
	due := start.Add(2 * time.Second)
	schedule("due", due)
	if err := sender.CancelScheduledMessages(testContext(t), []int64{cancelled}, nil); err != nil {
		t.Fatalf("CancelScheduledMessages: %v", err)
	}
	if elapsed := time.Since(start); elapsed >= time.Second {
		t.Fatalf("scheduling and cancelling took %v, longer than the test allows for", elapsed)
	}
	return due
}

// requireScheduledDelivery receives "due" (not before it is due) and then finds nothing left.
func requireScheduledDelivery(t *testing.T, receiver *azservicebus.Receiver, due time.Time) {
	t.Helper()
	message := receiveOne(t, receiver)
	requireEqual(t, "body", string(message.Body), "due")
	// AMQP timestamps have millisecond precision.
	if received := time.Now(); received.Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("received at %v, before it was due at %v", received, due)
	}
	if message.ScheduledEnqueueTime == nil || !message.ScheduledEnqueueTime.Equal(due.Truncate(time.Millisecond)) {
		t.Fatalf("ScheduledEnqueueTime %v, want %v", message.ScheduledEnqueueTime, due)
	}
	complete(t, receiver, message)
	requireBodies(t, peekAll(t, receiver))
}

func TestScheduleAndCancelOnAQueue(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	due := scheduleTwoCancelOne(t, newSender(t, client, "q-schedule"))
	requireScheduledDelivery(t, newReceiver(t, client, "q-schedule", nil), due)
}

func TestScheduleAndCancelOnATopic(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	due := scheduleTwoCancelOne(t, newSender(t, client, "t-schedule"))
	requireScheduledDelivery(t, newSubscriptionReceiver(t, client, "t-schedule", "all"), due)
}
