// Premium's large messages through the official Go SDK: a queue created through the admin
// client with MaxMessageSizeInKilobytes 102400 takes a 50 MB message, which comes back whole and
// is completed; lowered to 1024 through the API, the limit the next sender's link advertises
// makes the SDK refuse a larger message.
package sdk

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

const megabyte = 1024 * 1024

func randomBody(t *testing.T, size int) []byte {
	t.Helper()
	body := make([]byte, size)
	if _, err := rand.Read(body); err != nil {
		t.Fatalf("rand.Read: %v", err)
	}
	return body
}

// Not parallel: it runs before the parallel tests, whose timings it would otherwise disturb.
func TestA50MBMessageCrossesAQueueCreatedWithPremiumsLargestLimit(t *testing.T) {
	ctx := testContext(t)
	adminClient := newAdminClient(t)
	properties := admin.QueueProperties{MaxMessageSizeInKilobytes: ptr(int64(102400))}
	must[admin.CreateQueueResponse](t, "CreateQueue")(adminClient.CreateQueue(ctx, "go-large",
		&admin.CreateQueueOptions{Properties: &properties}))
	read := must[*admin.GetQueueResponse](t, "GetQueue")(adminClient.GetQueue(ctx, "go-large", nil))
	requirePtr(t, "MaxMessageSizeInKilobytes", read.MaxMessageSizeInKilobytes, 102400)

	client := newClient(t)
	body := randomBody(t, 50*megabyte)
	err := newSender(t, client, "go-large").SendMessage(ctx,
		&azservicebus.Message{Body: body, MessageID: ptr("large")}, nil)
	if err != nil {
		t.Fatalf("SendMessage of 50 MB: %v", err)
	}
	receiver := newReceiver(t, client, "go-large", nil)
	message := receiveOne(t, receiver)
	requirePtr(t, "MessageID", &message.MessageID, "large")
	if !bytes.Equal(message.Body, body) {
		t.Fatalf("the 50 MB body came back changed (%d bytes)", len(message.Body))
	}
	if err := receiver.CompleteMessage(ctx, message, nil); err != nil {
		t.Fatalf("CompleteMessage: %v", err)
	}

	// The limit lowered through the API is the one the next sender's link advertises, which the
	// SDK checks a message against before sending it.
	read.MaxMessageSizeInKilobytes = ptr(int64(1024))
	must[admin.UpdateQueueResponse](t, "UpdateQueue")(adminClient.UpdateQueue(ctx, "go-large",
		read.QueueProperties, nil))
	err = newSender(t, client, "go-large").SendMessage(ctx,
		&azservicebus.Message{Body: randomBody(t, megabyte+64*1024)}, nil)
	if !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Fatalf("a message past the 1024 KiB limit: want ErrMessageTooLarge, got %v", err)
	}
}
