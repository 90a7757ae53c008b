// The administration API through the official Go admin client (azservicebus/admin): queues,
// topics, subscriptions and rules created, read, listed, changed and deleted while the broker
// runs, their runtime counts, and entities made through the API used over AMQP at once.
//
// The v1.11 admin client always builds https URLs; it is used on the broker's plain-HTTP admin
// port with the workaround of Microsoft's emulator sample (a Transport that sets the scheme to
// http).
package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

// httpOnlyTransport is the emulator sample's workaround: the request as the SDK built it, sent
// over plain http to the same host and port.
type httpOnlyTransport struct {
	base http.RoundTripper
}

func (t *httpOnlyTransport) Do(req *http.Request) (*http.Response, error) {
	clone := req.Clone(req.Context())
	urlCopy := *clone.URL
	urlCopy.Scheme = "http"
	clone.URL = &urlCopy
	return t.base.RoundTrip(clone)
}

func newAdminClient(t *testing.T) *admin.Client {
	t.Helper()
	return newAdminClientFor(t, adminConnectionString)
}

func newAdminClientFor(t *testing.T, connectionString string) *admin.Client {
	t.Helper()
	client, err := admin.NewClientFromConnectionString(connectionString, &admin.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: &httpOnlyTransport{base: http.DefaultTransport}},
	})
	if err != nil {
		t.Fatalf("admin.NewClientFromConnectionString: %v", err)
	}
	return client
}

// requireStatus fails unless err is an *azcore.ResponseError with the given HTTP status.
func requireStatus(t *testing.T, err error, status int, operation string) {
	t.Helper()
	var responseError *azcore.ResponseError
	if !errors.As(err, &responseError) || responseError.StatusCode != status {
		t.Fatalf("%s: want an *azcore.ResponseError with status %d, got %T: %v", operation, status, err, err)
	}
}

func must[T any](t *testing.T, operation string) func(T, error) T {
	return func(value T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", operation, err)
		}
		return value
	}
}

func requirePtr[T comparable](t *testing.T, what string, got *T, want T) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: got nil, want %v", what, want)
	}
	requireEqual(t, what, *got, want)
}

func queueNames(t *testing.T, client *admin.Client) []string {
	t.Helper()
	var names []string
	pager := client.NewListQueuesPager(nil)
	for pager.More() {
		page := must[admin.ListQueuesResponse](t, "ListQueues page")(pager.NextPage(testContext(t)))
		for _, queue := range page.Queues {
			names = append(names, queue.QueueName)
		}
	}
	return names
}

func TestAdminCreatesAQueueWithItsPropertiesAndRefusesItTwice(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	ctx := testContext(t)
	properties := admin.QueueProperties{
		LockDuration:                        ptr("PT30S"),
		MaxDeliveryCount:                    ptr(int32(7)),
		DefaultMessageTimeToLive:            ptr("P1D"),
		DeadLetteringOnMessageExpiration:    ptr(true),
		RequiresDuplicateDetection:          ptr(true),
		DuplicateDetectionHistoryTimeWindow: ptr("PT2M"),
		MaxSizeInMegabytes:                  ptr(int32(2048)),
		UserMetadata:                        ptr("made by the Go admin test"),
	}
	created := must[admin.CreateQueueResponse](t, "CreateQueue")(client.CreateQueue(ctx, "go-made-by-api",
		&admin.CreateQueueOptions{Properties: &properties}))
	requireEqual(t, "created name", created.QueueName, "go-made-by-api")
	read := must[*admin.GetQueueResponse](t, "GetQueue")(client.GetQueue(ctx, "go-made-by-api", nil))
	if read == nil {
		t.Fatal("GetQueue of the queue just created returned nil")
	}
	requireEqual(t, "name", read.QueueName, "go-made-by-api")
	for what, got := range map[string]admin.QueueProperties{"read": read.QueueProperties, "created": created.QueueProperties} {
		requirePtr(t, what+" LockDuration", got.LockDuration, "PT30S")
		requirePtr(t, what+" MaxDeliveryCount", got.MaxDeliveryCount, 7)
		requirePtr(t, what+" DefaultMessageTimeToLive", got.DefaultMessageTimeToLive, "P1D")
		requirePtr(t, what+" DeadLetteringOnMessageExpiration", got.DeadLetteringOnMessageExpiration, true)
		requirePtr(t, what+" RequiresDuplicateDetection", got.RequiresDuplicateDetection, true)
		requirePtr(t, what+" DuplicateDetectionHistoryTimeWindow", got.DuplicateDetectionHistoryTimeWindow, "PT2M")
		requirePtr(t, what+" MaxSizeInMegabytes", got.MaxSizeInMegabytes, 2048)
		requirePtr(t, what+" UserMetadata", got.UserMetadata, "made by the Go admin test")
	}

	_, err := client.CreateQueue(ctx, "go-made-by-api", nil)
	requireStatus(t, err, http.StatusConflict, "CreateQueue of an existing queue")
}

func TestAdminReportsAMissingQueueAsNil(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	ctx := testContext(t)
	queue, err := client.GetQueue(ctx, "go-no-such-queue", nil)
	if queue != nil || err != nil {
		t.Fatalf("GetQueue of a missing queue: want nil, nil; got %+v, %v", queue, err)
	}
	runtime, err := client.GetQueueRuntimeProperties(ctx, "go-no-such-queue", nil)
	if runtime != nil || err != nil {
		t.Fatalf("GetQueueRuntimeProperties of a missing queue: want nil, nil; got %+v, %v", runtime, err)
	}
	_, err = client.DeleteQueue(ctx, "go-no-such-queue", nil)
	requireStatus(t, err, http.StatusNotFound, "DeleteQueue of a missing queue")
}

func TestAdminRuntimePropertiesCountActiveDeadLetteredAndScheduledMessages(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	must[admin.CreateQueueResponse](t, "CreateQueue")(client.CreateQueue(testContext(t), "go-counted", nil))

	// Used over AMQP at once.
	bus := newClient(t)
	sender := newSender(t, bus, "go-counted")
	sendTexts(t, sender, "m0", "m1", "m2")
	if _, err := sender.ScheduleMessages(testContext(t), []*azservicebus.Message{{Body: []byte("later")}},
		time.Now().Add(time.Hour), nil); err != nil {
		t.Fatalf("ScheduleMessages: %v", err)
	}
	receiver := newReceiver(t, bus, "go-counted", nil)
	if err := receiver.DeadLetterMessage(testContext(t), receiveOne(t, receiver), nil); err != nil {
		t.Fatalf("DeadLetterMessage: %v", err)
	}

	runtime := must[*admin.GetQueueRuntimePropertiesResponse](t, "GetQueueRuntimeProperties")(
		client.GetQueueRuntimeProperties(testContext(t), "go-counted", nil))
	if runtime == nil {
		t.Fatal("GetQueueRuntimeProperties returned nil")
	}
	requireEqual(t, "QueueName", runtime.QueueName, "go-counted")
	requireEqual(t, "ActiveMessageCount", runtime.ActiveMessageCount, 2)
	requireEqual(t, "DeadLetterMessageCount", runtime.DeadLetterMessageCount, 1)
	requireEqual(t, "ScheduledMessageCount", runtime.ScheduledMessageCount, 1)
	requireEqual(t, "TotalMessageCount", runtime.TotalMessageCount, 4)
	if runtime.SizeInBytes <= 0 {
		t.Fatalf("SizeInBytes %d", runtime.SizeInBytes)
	}
	if runtime.CreatedAt.IsZero() {
		t.Fatal("CreatedAt is zero")
	}
}

// TestAdminListsQueuesPastOneHundred runs alone, before the parallel tests: paging by $skip
// over a listing that others change meanwhile would see entries shift (as with the service).
func TestAdminListsQueuesPastOneHundred(t *testing.T) {
	client := newAdminClient(t)
	made := make([]string, 105)
	for i := range made {
		made[i] = fmt.Sprintf("go-page-%03d", i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(made))
	slots := make(chan struct{}, 16)
	for _, name := range made {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if _, err := client.CreateQueue(context.Background(), name, nil); err != nil {
				errs <- fmt.Errorf("CreateQueue(%s): %w", name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var pages []int
	var names []string
	pager := client.NewListQueuesPager(nil)
	for pager.More() {
		page := must[admin.ListQueuesResponse](t, "ListQueues page")(pager.NextPage(testContext(t)))
		if len(page.Queues) > 0 {
			pages = append(pages, len(page.Queues))
		}
		for _, queue := range page.Queues {
			names = append(names, queue.QueueName)
		}
	}
	if len(pages) < 2 || pages[0] != 100 {
		t.Fatalf("page sizes %v: want a first page of 100 and more after it", pages)
	}
	for _, name := range append(made, "q-send-receive") {
		if !slices.Contains(names, name) {
			t.Fatalf("%s is not listed (%d queues listed)", name, len(names))
		}
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(names) {
		t.Fatalf("a queue is listed twice: %v", names)
	}

	var small []int
	smallPager := client.NewListQueuesPager(&admin.ListQueuesOptions{MaxPageSize: 40})
	for smallPager.More() {
		page := must[admin.ListQueuesResponse](t, "ListQueues page of 40")(smallPager.NextPage(testContext(t)))
		small = append(small, len(page.Queues))
	}
	total := 0
	for _, size := range small {
		if size > 40 {
			t.Fatalf("page sizes %v with MaxPageSize 40", small)
		}
		total += size
	}
	if small[0] != 40 || total != len(names) {
		t.Fatalf("page sizes %v with MaxPageSize 40: want pages of 40 adding up to %d", small, len(names))
	}
}

func TestAdminUpdateOfTheLockDurationTakesEffect(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	ctx := testContext(t)
	must[admin.CreateQueueResponse](t, "CreateQueue")(client.CreateQueue(ctx, "go-lock-change",
		&admin.CreateQueueOptions{Properties: &admin.QueueProperties{
			LockDuration: ptr("PT10S"), MaxDeliveryCount: ptr(int32(3)),
		}}))
	queue := must[*admin.GetQueueResponse](t, "GetQueue")(client.GetQueue(ctx, "go-lock-change", nil))
	requirePtr(t, "LockDuration before", queue.LockDuration, "PT10S")
	queue.LockDuration = ptr("PT2M")
	updated := must[admin.UpdateQueueResponse](t, "UpdateQueue")(
		client.UpdateQueue(ctx, "go-lock-change", queue.QueueProperties, nil))
	requirePtr(t, "LockDuration in the update response", updated.LockDuration, "PT2M")
	read := must[*admin.GetQueueResponse](t, "GetQueue")(client.GetQueue(ctx, "go-lock-change", nil))
	requirePtr(t, "LockDuration read back", read.LockDuration, "PT2M")
	requirePtr(t, "MaxDeliveryCount kept", read.MaxDeliveryCount, 3)

	bus := newClient(t)
	sendTexts(t, newSender(t, bus, "go-lock-change"), "held")
	receiver := newReceiver(t, bus, "go-lock-change", nil)
	message := receiveOne(t, receiver)
	if message.LockedUntil == nil {
		t.Fatal("the received message has no LockedUntil")
	}
	if heldFor := time.Until(*message.LockedUntil); heldFor < 90*time.Second {
		t.Fatalf("lock held for %v, want about two minutes", heldFor)
	}
	complete(t, receiver, message)
}

func TestAdminDeletedQueueIsGoneFromReadsListsAndAMQP(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	ctx := testContext(t)
	must[admin.CreateQueueResponse](t, "CreateQueue")(client.CreateQueue(ctx, "go-short-lived", nil))
	sendTexts(t, newSender(t, newClient(t), "go-short-lived"), "gone with it")
	must[admin.DeleteQueueResponse](t, "DeleteQueue")(client.DeleteQueue(ctx, "go-short-lived", nil))
	if queue, err := client.GetQueue(ctx, "go-short-lived", nil); queue != nil || err != nil {
		t.Fatalf("GetQueue of a deleted queue: want nil, nil; got %+v, %v", queue, err)
	}
	if slices.Contains(queueNames(t, client), "go-short-lived") {
		t.Fatal("the deleted queue is still listed")
	}
	err := newSender(t, newClient(t), "go-short-lived").SendMessage(testContext(t),
		&azservicebus.Message{Body: []byte("refused")}, nil)
	requireCode(t, err, azservicebus.CodeNotFound, "SendMessage to a deleted queue")
}

func TestAdminManagesTopicsSubscriptionsAndRulesThatRouteMessages(t *testing.T) {
	t.Parallel()
	client := newAdminClient(t)
	ctx := testContext(t)
	const topic = "go-api-topic"
	must[admin.CreateTopicResponse](t, "CreateTopic")(client.CreateTopic(ctx, topic,
		&admin.CreateTopicOptions{Properties: &admin.TopicProperties{DefaultMessageTimeToLive: ptr("PT2H")}}))
	gotTopic := must[*admin.GetTopicResponse](t, "GetTopic")(client.GetTopic(ctx, topic, nil))
	requireEqual(t, "TopicName", gotTopic.TopicName, topic)
	requirePtr(t, "topic DefaultMessageTimeToLive", gotTopic.DefaultMessageTimeToLive, "PT2H")
	_, err := client.CreateTopic(ctx, topic, nil)
	requireStatus(t, err, http.StatusConflict, "CreateTopic of an existing topic")

	must[admin.CreateSubscriptionResponse](t, "CreateSubscription everything")(client.CreateSubscription(ctx,
		topic, "everything", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
			MaxDeliveryCount: ptr(int32(5)),
		}}))
	must[admin.CreateSubscriptionResponse](t, "CreateSubscription red-only")(client.CreateSubscription(ctx,
		topic, "red-only", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
			LockDuration: ptr("PT45S"),
		}}))
	subscription := must[*admin.GetSubscriptionResponse](t, "GetSubscription")(
		client.GetSubscription(ctx, topic, "red-only", nil))
	if subscription == nil {
		t.Fatal("GetSubscription of the subscription just created returned nil")
	}
	requireEqual(t, "SubscriptionName", subscription.SubscriptionName, "red-only")
	requirePtr(t, "subscription LockDuration", subscription.LockDuration, "PT45S")
	everything := must[*admin.GetSubscriptionResponse](t, "GetSubscription")(
		client.GetSubscription(ctx, topic, "everything", nil))
	requirePtr(t, "subscription MaxDeliveryCount", everything.MaxDeliveryCount, 5)
	var subscriptions []string
	subscriptionPager := client.NewListSubscriptionsPager(topic, nil)
	for subscriptionPager.More() {
		page := must[admin.ListSubscriptionsResponse](t, "ListSubscriptions page")(subscriptionPager.NextPage(ctx))
		for _, item := range page.Subscriptions {
			subscriptions = append(subscriptions, item.SubscriptionName)
		}
	}
	if !slices.Equal(subscriptions, []string{"everything", "red-only"}) {
		t.Fatalf("ListSubscriptions: %v", subscriptions)
	}
	if missing, err := client.GetSubscription(ctx, topic, "no-such-subscription", nil); missing != nil || err != nil {
		t.Fatalf("GetSubscription of a missing subscription: want nil, nil; got %+v, %v", missing, err)
	}

	rule := must[admin.CreateRuleResponse](t, "CreateRule")(client.CreateRule(ctx, topic, "red-only",
		&admin.CreateRuleOptions{Name: ptr("red"), Filter: &admin.SQLFilter{Expression: "color = 'red'"}}))
	requireEqual(t, "rule Name", rule.Name, "red")
	must[admin.DeleteRuleResponse](t, "DeleteRule $Default")(client.DeleteRule(ctx, topic, "red-only", "$Default", nil))
	read := must[*admin.GetRuleResponse](t, "GetRule")(client.GetRule(ctx, topic, "red-only", "red", nil))
	if read == nil {
		t.Fatal("GetRule of the rule just created returned nil")
	}
	filter, ok := read.Filter.(*admin.SQLFilter)
	if !ok || filter.Expression != "color = 'red'" {
		t.Fatalf("GetRule filter: %#v", read.Filter)
	}
	defaultRule := must[*admin.GetRuleResponse](t, "GetRule $Default")(client.GetRule(ctx, topic, "everything", "$Default", nil))
	if defaultRule == nil {
		t.Fatal("the $Default rule of a new subscription is missing")
	}
	if _, ok := defaultRule.Filter.(*admin.TrueFilter); !ok {
		t.Fatalf("the $Default rule's filter: want *admin.TrueFilter, got %#v", defaultRule.Filter)
	}
	_, err = client.CreateRule(ctx, topic, "red-only",
		&admin.CreateRuleOptions{Name: ptr("red"), Filter: &admin.SQLFilter{Expression: "1=1"}})
	requireStatus(t, err, http.StatusConflict, "CreateRule of an existing rule")
	if missing, err := client.GetRule(ctx, topic, "red-only", "$Default", nil); missing != nil || err != nil {
		t.Fatalf("GetRule of a deleted rule: want nil, nil; got %+v, %v", missing, err)
	}
	requireEqual(t, "rules of red-only", fmt.Sprint(ruleNames(t, client, topic, "red-only")), "[red]")

	bus := newClient(t)
	sender := newSender(t, bus, topic)
	for _, color := range []string{"red", "blue"} {
		if err := sender.SendMessage(testContext(t), &azservicebus.Message{
			Body: []byte(color), ApplicationProperties: map[string]any{"color": color},
		}, nil); err != nil {
			t.Fatalf("SendMessage(%s): %v", color, err)
		}
	}
	redOnly := newSubscriptionReceiver(t, bus, topic, "red-only")
	received := receiveOne(t, redOnly)
	requireEqual(t, "body routed to red-only", string(received.Body), "red")
	complete(t, redOnly, received)
	requireBodies(t, peekAll(t, redOnly))
	counts := must[*admin.GetSubscriptionRuntimePropertiesResponse](t, "GetSubscriptionRuntimeProperties")(
		client.GetSubscriptionRuntimeProperties(ctx, topic, "everything", nil))
	requireEqual(t, "everything ActiveMessageCount", counts.ActiveMessageCount, 2)
	topicRuntime := must[*admin.GetTopicRuntimePropertiesResponse](t, "GetTopicRuntimeProperties")(
		client.GetTopicRuntimeProperties(ctx, topic, nil))
	requireEqual(t, "SubscriptionCount", topicRuntime.SubscriptionCount, 2)

	must[admin.DeleteRuleResponse](t, "DeleteRule red")(client.DeleteRule(ctx, topic, "red-only", "red", nil))
	requireEqual(t, "rules of red-only after the delete", len(ruleNames(t, client, topic, "red-only")), 0)
	must[admin.DeleteSubscriptionResponse](t, "DeleteSubscription")(client.DeleteSubscription(ctx, topic, "everything", nil))
	if gone, err := client.GetSubscription(ctx, topic, "everything", nil); gone != nil || err != nil {
		t.Fatalf("GetSubscription of a deleted subscription: want nil, nil; got %+v, %v", gone, err)
	}
	must[admin.DeleteTopicResponse](t, "DeleteTopic")(client.DeleteTopic(ctx, topic, nil))
	if gone, err := client.GetTopic(ctx, topic, nil); gone != nil || err != nil {
		t.Fatalf("GetTopic of a deleted topic: want nil, nil; got %+v, %v", gone, err)
	}
}

func TestAdminRefusesATokenSignedWithTheWrongKey(t *testing.T) {
	t.Parallel()
	wrong := newAdminClientFor(t, strings.Replace(adminConnectionString, "SAS_KEY_VALUE", "NOT_THE_KEY", 1))
	_, err := wrong.GetQueue(testContext(t), "q-send-receive", nil)
	requireStatus(t, err, http.StatusUnauthorized, "GetQueue with the wrong key")
	_, err = wrong.CreateQueue(testContext(t), "go-never-made", nil)
	requireStatus(t, err, http.StatusUnauthorized, "CreateQueue with the wrong key")
	if queue, err := newAdminClient(t).GetQueue(testContext(t), "go-never-made", nil); queue != nil || err != nil {
		t.Fatalf("a queue was made with the wrong key: %+v, %v", queue, err)
	}
}

func ruleNames(t *testing.T, client *admin.Client, topic, subscription string) []string {
	t.Helper()
	var names []string
	pager := client.NewListRulesPager(topic, subscription, nil)
	for pager.More() {
		page := must[admin.ListRulesResponse](t, "ListRules page")(pager.NextPage(testContext(t)))
		for _, rule := range page.Rules {
			names = append(names, rule.Name)
		}
	}
	return names
}

// TestAdminSpeaksHTTPSUnchanged: the official admin client with no option at all speaks https
// to the admin port, trusting the development CA through SSL_CERT_FILE (set in TestMain). Its
// queue sorts after every other, so that the paging test running beside it sees no shift.
func TestAdminSpeaksHTTPSUnchanged(t *testing.T) {
	t.Parallel()
	client, err := admin.NewClientFromConnectionString(adminConnectionString, nil)
	if err != nil {
		t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	ctx := testContext(t)
	properties := admin.QueueProperties{MaxDeliveryCount: ptr(int32(4))}
	must[admin.CreateQueueResponse](t, "CreateQueue over https")(client.CreateQueue(ctx, "z-go-over-https",
		&admin.CreateQueueOptions{Properties: &properties}))
	read := must[*admin.GetQueueResponse](t, "GetQueue over https")(client.GetQueue(ctx, "z-go-over-https", nil))
	if read == nil {
		t.Fatal("GetQueue over https returned nil for the queue just created")
	}
	requirePtr(t, "MaxDeliveryCount", read.MaxDeliveryCount, 4)
	must[admin.DeleteQueueResponse](t, "DeleteQueue over https")(client.DeleteQueue(ctx, "z-go-over-https", nil))
}
