// A topic whose subscriptions have filter rules configured in Config.json: "all" (no rules)
// takes every message, "red-sql" only `color = 'red' AND quantity > 5`, "order-correlation"
// only Subject "order" with priority 1. Each subscription receives exactly what its rule selects.
package sdk

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestSubscriptionsReceiveWhatTheirRulesSelect(t *testing.T) {
	t.Parallel()
	client := newClient(t)
	sender := newSender(t, client, "t-filters")
	for _, message := range []*azservicebus.Message{
		{Body: []byte("big red"), ApplicationProperties: map[string]any{"color": "red", "quantity": 10}},
		{Body: []byte("order"), Subject: ptr("order"), ApplicationProperties: map[string]any{"priority": 1}},
		{Body: []byte("big blue"), ApplicationProperties: map[string]any{"color": "blue", "quantity": 10}},
		{Body: []byte("small red"), ApplicationProperties: map[string]any{"color": "red", "quantity": 2}},
	} {
		if err := sender.SendMessage(testContext(t), message, nil); err != nil {
			t.Fatalf("SendMessage(%s): %v", message.Body, err)
		}
	}
	// Each send reaches all its subscriptions at once, so once "all" has the last message
	// every subscription holds everything it will get.
	all := newSubscriptionReceiver(t, client, "t-filters", "all")
	received := receiveExactly(t, all, 4)
	requireBodies(t, received, "big red", "order", "big blue", "small red")
	complete(t, all, received...)
	for subscription, want := range map[string]string{"red-sql": "big red", "order-correlation": "order"} {
		receiver := newSubscriptionReceiver(t, client, "t-filters", subscription)
		message := receiveOne(t, receiver)
		requireEqual(t, subscription+" body", string(message.Body), want)
		complete(t, receiver, message)
		requireBodies(t, peekAll(t, receiver))
	}
}
