// Shared-access policies (--policies) through azservicebus: on a broker of its own with keys of
// its own, a Listen-only key's send (the link refused with amqp:unauthorized-access) and a wrong
// key (its put-token refused with 401) both come back as *azservicebus.Error with
// CodeUnauthorizedAccess, while the Manage key sends.
package sdk

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func freshKey(t *testing.T) string {
	t.Helper()
	bytes := make([]byte, 32)
	if _, err := rand.Read(bytes); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(bytes)
}

func TestPoliciesRefuseAMissingSendClaimAndAWrongKey(t *testing.T) {
	root, listener := freshKey(t), freshKey(t)
	policies := filepath.Join(t.TempDir(), "policies.json")
	document, err := json.Marshal(properties{"SharedAccessPolicies": []any{
		properties{"KeyName": "root", "PrimaryKey": root, "Rights": []string{"Manage", "Send", "Listen"}},
		properties{"KeyName": "listener", "PrimaryKey": listener, "Rights": []string{"Listen"}},
	}})
	if err == nil {
		err = os.WriteFile(policies, document, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	secured, err := startBroker("--policies", policies)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := secured.stop(); err != nil {
			t.Error(err)
		}
	})
	send := func(keyName, key string) error {
		connection := "Endpoint=sb://localhost:" + secured.port + ";SharedAccessKeyName=" + keyName +
			";SharedAccessKey=" + key + ";UseDevelopmentEmulator=true;"
		client, err := azservicebus.NewClientFromConnectionString(connection,
			&azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
		if err != nil {
			t.Fatalf("NewClientFromConnectionString: %v", err)
		}
		defer client.Close(context.Background())
		sender, err := client.NewSender("q-send-receive", nil)
		if err != nil {
			t.Fatalf("NewSender: %v", err)
		}
		defer sender.Close(context.Background())
		return sender.SendMessage(testContext(t), &azservicebus.Message{Body: []byte("policies")}, nil)
	}
	refused := send("listener", listener)
	requireCode(t, refused, azservicebus.CodeUnauthorizedAccess, "send with a Listen-only key")
	if !strings.Contains(refused.Error(), "'Send' claim(s) are required") {
		t.Fatalf("the refusal does not name the claim: %v", refused)
	}
	requireCode(t, send("root", listener), azservicebus.CodeUnauthorizedAccess, "send with a wrong key")
	if err := send("root", root); err != nil {
		t.Fatalf("send with the Manage key: %v", err)
	}
}
