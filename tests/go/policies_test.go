// Shared-access policies (--policies) through azservicebus and its admin client, on a broker of
// its own with keys of its own: a Send-only key sends and cannot receive; a Listen-only key
// (either of its keys) receives, settles and cannot send; a wrong key is refused at $cbs; each
// refusal is an *azservicebus.Error with CodeUnauthorizedAccess. The admin client creates a
// queue with an AuthorizationRules rule, reads it back, and its key then works over AMQP on that
// queue only (a topic's rule on its subscriptions and their dead-letter queues too); a Listen key is refused by the admin client and the explorer's API (401); a SIGHUP
// re-read rotates and removes keys at once; the emulator key is refused off loopback.
package sdk

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

func freshKey(t *testing.T) string {
	t.Helper()
	bytes := make([]byte, 32)
	if _, err := rand.Read(bytes); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(bytes)
}

// writePolicies writes a Manage rule "root", a Listen rule "listener" (with a secondary key
// "listener2") and, when keys has one, a Send rule "sender".
func writePolicies(t *testing.T, path string, keys map[string]string) {
	t.Helper()
	rules := []any{
		properties{"KeyName": "root", "PrimaryKey": keys["root"], "Rights": []string{"Manage"}},
		properties{"KeyName": "listener", "PrimaryKey": keys["listener"],
			"SecondaryKey": keys["listener2"], "Rights": []string{"Listen"}},
	}
	if sender, ok := keys["sender"]; ok {
		rules = append(rules, properties{"KeyName": "sender", "PrimaryKey": sender, "Rights": []string{"Send"}})
	}
	document, err := json.Marshal(properties{"SharedAccessPolicies": rules})
	if err == nil {
		err = os.WriteFile(path, document, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// securedBroker starts a broker with writePolicies' rules; returns it, the keys and the file.
func securedBroker(t *testing.T) (*broker, map[string]string, string) {
	t.Helper()
	keys := map[string]string{"root": freshKey(t), "sender": freshKey(t), "listener": freshKey(t),
		"listener2": freshKey(t)}
	policies := filepath.Join(t.TempDir(), "policies.json")
	writePolicies(t, policies, keys)
	secured, err := startBroker("--policies", policies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := secured.stop(); err != nil {
			t.Error(err)
		}
	})
	return secured, keys, policies
}

// signedAs is a connection string to port with keyName's key.
func signedAs(port, keyName, key string) string {
	return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=" + keyName +
		";SharedAccessKey=" + key + ";UseDevelopmentEmulator=true;"
}

// clientAs is a client that gives up at the first refusal.
func clientAs(t *testing.T, connection string) *azservicebus.Client {
	t.Helper()
	client, err := azservicebus.NewClientFromConnectionString(connection,
		&azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	return client
}

func sendWith(t *testing.T, connection, queue, text string) error {
	t.Helper()
	return newSender(t, clientAs(t, connection), queue).
		SendMessage(testContext(t), &azservicebus.Message{Body: []byte(text)}, nil)
}

func requireUnauthorized(t *testing.T, err error, claim, operation string) {
	t.Helper()
	requireCode(t, err, azservicebus.CodeUnauthorizedAccess, operation)
	if !strings.Contains(err.Error(), claim) {
		t.Fatalf("%s: the refusal does not say %q: %v", operation, claim, err)
	}
}

// explorerStatus is the status of a GET of address with a SAS token of keyName's key.
func explorerStatus(t *testing.T, address, keyName, key string) int {
	t.Helper()
	expiry := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	audience := url.QueryEscape(address)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(audience + "\n" + expiry))
	signature := url.QueryEscape(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	request, err := http.NewRequestWithContext(testContext(t), http.MethodGet, address, nil)
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Authorization", "SharedAccessSignature sr="+audience+"&sig="+signature+
		"&se="+expiry+"&skn="+keyName)
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	return response.StatusCode
}

func TestPoliciesGiveEachKeyItsRights(t *testing.T) {
	secured, keys, _ := securedBroker(t)
	const queue = "q-send-receive"
	as := func(name string) string { return signedAs(secured.port, name, keys[name]) }

	if err := sendWith(t, as("sender"), queue, "from the sender"); err != nil {
		t.Fatalf("send with the Send key: %v", err)
	}
	_, err := newReceiver(t, clientAs(t, as("sender")), queue, nil).ReceiveMessages(testContext(t), 1, nil)
	requireUnauthorized(t, err, "'Listen' claim(s) are required", "receive with the Send key")

	for _, name := range []string{"listener", "listener2"} {
		listener := signedAs(secured.port, "listener", keys[name])
		requireUnauthorized(t, sendWith(t, listener, queue, "no"), "'Send' claim(s) are required",
			"send with the Listen key "+name)
	}
	receiver := newReceiver(t, clientAs(t, signedAs(secured.port, "listener", keys["listener2"])), queue, nil)
	message := receiveOne(t, receiver)
	requireEqual(t, "body", string(message.Body), "from the sender")
	complete(t, receiver, message)

	requireCode(t, sendWith(t, signedAs(secured.port, "root", keys["listener"]), queue, "no"),
		azservicebus.CodeUnauthorizedAccess, "send with a wrong key")
}

func TestPoliciesAdminClientMakesAnEntityRuleWhoseKeyWorksThereOnly(t *testing.T) {
	secured, keys, _ := securedBroker(t)
	adminAs := func(name string) *admin.Client {
		return newAdminClientFor(t, signedAs(secured.adminPort, name, keys[name]))
	}
	_, err := adminAs("listener").GetQueue(testContext(t), "q-send-receive", nil)
	requireStatus(t, err, http.StatusUnauthorized, "GetQueue with a Listen key")
	// The explorer's JSON API likewise needs Manage.
	explorer := "http://127.0.0.1:" + secured.adminPort + "/$busbar/api/namespace"
	requireEqual(t, "explorer API with a Listen key", explorerStatus(t, explorer, "listener", keys["listener"]),
		http.StatusUnauthorized)
	requireEqual(t, "explorer API with the Manage key", explorerStatus(t, explorer, "root", keys["root"]),
		http.StatusOK)

	const queue = "go-entity-rule"
	key := freshKey(t)
	rule := admin.AuthorizationRule{KeyName: ptr("go-app"), PrimaryKey: ptr(key),
		AccessRights: []admin.AccessRight{admin.AccessRightSend, admin.AccessRightListen}}
	root := adminAs("root")
	_, err = root.CreateQueue(testContext(t), queue, &admin.CreateQueueOptions{
		Properties: &admin.QueueProperties{AuthorizationRules: []admin.AuthorizationRule{rule}}})
	if err != nil {
		t.Fatalf("CreateQueue with a rule: %v", err)
	}
	read, err := root.GetQueue(testContext(t), queue, nil)
	if err != nil {
		t.Fatalf("GetQueue: %v", err)
	}
	if rules := read.AuthorizationRules; len(rules) != 1 || *rules[0].KeyName != "go-app" ||
		*rules[0].PrimaryKey != key || len(rules[0].AccessRights) != 2 {
		t.Fatalf("the rule read back: %+v", rules)
	}

	own := signedAs(secured.port, "go-app", key) + "EntityPath=" + queue + ";"
	if err := sendWith(t, own, queue, "entity key"); err != nil {
		t.Fatalf("send with the entity key: %v", err)
	}
	receiver := newReceiver(t, clientAs(t, own), queue, nil)
	complete(t, receiver, receiveOne(t, receiver))
	requireCode(t, sendWith(t, signedAs(secured.port, "go-app", key), "q-send-receive", "no"),
		azservicebus.CodeUnauthorizedAccess, "send to another queue with the entity key")
}

func TestPoliciesTopicRuleCoversItsSubscriptionsAndTheirDeadLetterQueues(t *testing.T) {
	secured, keys, _ := securedBroker(t)
	root := newAdminClientFor(t, signedAs(secured.adminPort, "root", keys["root"]))
	const topic = "go-topic-rule"
	key := freshKey(t)
	rule := admin.AuthorizationRule{KeyName: ptr("go-billing"), PrimaryKey: ptr(key),
		AccessRights: []admin.AccessRight{admin.AccessRightSend, admin.AccessRightListen}}
	_, err := root.CreateTopic(testContext(t), topic, &admin.CreateTopicOptions{
		Properties: &admin.TopicProperties{AuthorizationRules: []admin.AuthorizationRule{rule}}})
	if err != nil {
		t.Fatalf("CreateTopic with a rule: %v", err)
	}
	if _, err := root.CreateSubscription(testContext(t), topic, "audit", nil); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}

	own := clientAs(t, signedAs(secured.port, "go-billing", key)+"EntityPath="+topic+";")
	err = newSender(t, own, topic).SendMessage(testContext(t),
		&azservicebus.Message{Body: []byte("for audit")}, nil)
	if err != nil {
		t.Fatalf("send to the topic with its key: %v", err)
	}
	receiver := newSubscriptionReceiver(t, own, topic, "audit")
	options := &azservicebus.DeadLetterOptions{Reason: ptr("checked")}
	if err := receiver.DeadLetterMessage(testContext(t), receiveOne(t, receiver), options); err != nil {
		t.Fatalf("DeadLetterMessage: %v", err)
	}
	deadLetters, err := own.NewReceiverForSubscription(topic, "audit",
		&azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		t.Fatalf("NewReceiverForSubscription (dead letters): %v", err)
	}
	t.Cleanup(func() { _ = deadLetters.Close(context.Background()) })
	message := receiveOne(t, deadLetters)
	requireEqual(t, "body", string(message.Body), "for audit")
	if message.DeadLetterReason == nil {
		t.Fatal("the dead-lettered message lacks its reason")
	}
	requireEqual(t, "DeadLetterReason", *message.DeadLetterReason, "checked")
	complete(t, deadLetters, message)
	requireCode(t, sendWith(t, signedAs(secured.port, "go-billing", key), "q-send-receive", "no"),
		azservicebus.CodeUnauthorizedAccess, "send to a queue with the topic's key")
}

func TestPoliciesRotationAndRemovalTakeEffectOnSIGHUP(t *testing.T) {
	secured, keys, policies := securedBroker(t)
	const queue = "q-send-receive"
	if err := sendWith(t, signedAs(secured.port, "sender", keys["sender"]), queue, "before"); err != nil {
		t.Fatalf("send before the re-read: %v", err)
	}
	// The listener's primary key is replaced and the sender's rule removed.
	rotated := map[string]string{"root": keys["root"], "listener": freshKey(t), "listener2": keys["listener2"]}
	writePolicies(t, policies, rotated)
	if err := secured.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-secured.reread:
	case <-testContext(t).Done():
		t.Fatal("no \"policies re-read\" line after SIGHUP")
	}
	requireCode(t, sendWith(t, signedAs(secured.port, "sender", keys["sender"]), queue, "no"),
		azservicebus.CodeUnauthorizedAccess, "send with a removed rule")
	_, err := newReceiver(t, clientAs(t, signedAs(secured.port, "listener", keys["listener"])), queue, nil).
		PeekMessages(testContext(t), 1, nil)
	requireCode(t, err, azservicebus.CodeUnauthorizedAccess, "peek with the rotated-away primary")
	for _, key := range []string{keys["listener2"], rotated["listener"]} {
		receiver := newReceiver(t, clientAs(t, signedAs(secured.port, "listener", key)), queue, nil)
		complete(t, receiver, receiveOne(t, receiver))
		if err := sendWith(t, signedAs(secured.port, "root", keys["root"]), queue, "again"); err != nil {
			t.Fatalf("send with the Manage key: %v", err)
		}
	}
}

func TestPoliciesRefuseTheEmulatorKeyOffLoopback(t *testing.T) {
	started := exec.Command(os.Getenv("BUSBAR_BIN"), "--memory", "--listen", "0.0.0.0:0",
		"--tls-listen", "none", "--admin-listen", "none")
	output, err := started.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("want exit status 2, got %v: %s", err, output)
	}
	if !strings.Contains(string(output), "--policies") {
		t.Fatalf("the refusal does not name --policies: %s", output)
	}
}
