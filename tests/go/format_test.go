// Message format: AMQP value and sequence bodies through AMQPAnnotatedMessage, and typed
// application properties (int, int32, string, bool, float, time) that come back with their
// types.
package sdk

import (
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// sendAnnotated sends each body as an AMQPAnnotatedMessage and returns the bodies received.
func roundTripBodies(t *testing.T, queue string, sent []azservicebus.AMQPAnnotatedMessageBody) []azservicebus.AMQPAnnotatedMessageBody {
	t.Helper()
	client := newClient(t)
	sender := newSender(t, client, queue)
	for _, body := range sent {
		message := &azservicebus.AMQPAnnotatedMessage{Body: body}
		if err := sender.SendAMQPAnnotatedMessage(testContext(t), message, nil); err != nil {
			t.Fatalf("SendAMQPAnnotatedMessage(%+v): %v", body, err)
		}
	}
	receiver := newReceiver(t, client, queue, nil)
	received := receiveExactly(t, receiver, len(sent))
	complete(t, receiver, received...)
	var got []azservicebus.AMQPAnnotatedMessageBody
	for _, message := range received {
		got = append(got, message.RawAMQPMessage.Body)
	}
	return got
}

func TestAMQPValueBodiesRoundTrip(t *testing.T) {
	t.Parallel()
	sent := []azservicebus.AMQPAnnotatedMessageBody{
		{Value: "a string value"},
		{Value: int64(-42)},
		{Value: []any{"list", int64(7), true}},
	}
	if got := roundTripBodies(t, "q-amqp-value", sent); !reflect.DeepEqual(got, sent) {
		t.Fatalf("received bodies %+v, sent %+v", got, sent)
	}
}

func TestAMQPSequenceBodiesRoundTrip(t *testing.T) {
	t.Parallel()
	sent := []azservicebus.AMQPAnnotatedMessageBody{
		{Sequence: [][]any{{"one", int64(1)}}},
		{Sequence: [][]any{{"first", true}, {2.5, "second"}}},
	}
	if got := roundTripBodies(t, "q-amqp-sequence", sent); !reflect.DeepEqual(got, sent) {
		t.Fatalf("received bodies %+v, sent %+v", got, sent)
	}
}

func TestTypedApplicationPropertiesRoundTrip(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	// AMQP timestamps have millisecond precision.
	stamp := time.Now().UTC().Truncate(time.Millisecond)
	sent := map[string]any{
		"count":    42, // a Go int travels as an AMQP long
		"small":    int32(-7),
		"name":     "widget",
		"urgent":   true,
		"ratio":    0.25,
		"deadline": stamp,
	}
	message := &azservicebus.Message{Body: []byte("typed"), ApplicationProperties: sent}
	if err := newSender(t, client, "q-app-properties").SendMessage(testContext(t), message, nil); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	receiver := newReceiver(t, client, "q-app-properties", nil)
	received := receiveOne(t, receiver)
	want := map[string]any{
		"count":    int64(42),
		"small":    int32(-7),
		"name":     "widget",
		"urgent":   true,
		"ratio":    0.25,
		"deadline": stamp,
	}
	got := received.ApplicationProperties
	for key, value := range want {
		if reflect.TypeOf(got[key]) != reflect.TypeOf(value) {
			t.Fatalf("property %q: got %T %v, want %T %v", key, got[key], got[key], value, value)
		}
	}
	if !got["deadline"].(time.Time).Equal(stamp) {
		t.Fatalf("deadline: got %v, want %v", got["deadline"], stamp)
	}
	delete(got, "deadline")
	delete(want, "deadline")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("application properties: got %v, want %v", got, want)
	}
	complete(t, receiver, received)
}
