// The transports with a production-style connection string (no port, no UseDevelopmentEmulator):
// AMQP over TLS (amqps) and AMQP over WebSockets (wss, `GET /$servicebus/websocket` with the
// AMQPWSB10 subprotocol), each sending, receiving with PeekLock and completing, with the
// broker's development CA trusted; and one port serving AMQPS, WebSockets and the admin client's
// https at once, for each of the broker's ports.
//
// The SDK connects to the connection string's host (port 5671 for amqps, 443 for wss); the
// tests point it at the broker's port as a user behind a proxy would: ClientOptions.CustomEndpoint
// for amqps, and the port added to the SDK's wss:// URL in the NewWebSocketConn function (the
// user's own code by the SDK's design).
package sdk

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/coder/websocket"
)

// productionConnectionString is shaped as the Azure portal gives it.
const productionConnectionString = "Endpoint=sb://localhost/;" +
	"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE"

// trustingCA is a TLS configuration that trusts the broker's development CA (and nothing else).
func trustingCA(t *testing.T) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("cannot read the broker's CA: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: roots}
}

// webSocketDialer is a ClientOptions.NewWebSocketConn opening AMQP over WebSockets (subprotocol
// AMQPWSB10) with TLS trusting the broker's CA, to the SDK's URL at the broker's port; the first
// URL the SDK asked for is sent to requested (if not nil).
func webSocketDialer(t *testing.T, port string, requested chan<- string) func(context.Context, azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: trustingCA(t)}}
	return func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
		select {
		case requested <- args.Host:
		default:
		}
		target, err := url.Parse(args.Host)
		if err != nil {
			return nil, err
		}
		target.Host = net.JoinHostPort(target.Hostname(), port)
		conn, response, err := websocket.Dial(ctx, target.String(), &websocket.DialOptions{
			HTTPClient:   client,
			Subprotocols: []string{"AMQPWSB10"},
		})
		if err != nil {
			return nil, err
		}
		if got := response.Header.Get("Sec-WebSocket-Protocol"); got != "AMQPWSB10" {
			_ = conn.CloseNow()
			return nil, fmt.Errorf("the broker chose the WebSocket subprotocol %q, want AMQPWSB10", got)
		}
		// The connection outlives the dial's context.
		return websocket.NetConn(context.Background(), conn, websocket.MessageBinary), nil
	}
}

func newTransportClient(t *testing.T, connectionString string, options azservicebus.ClientOptions) *azservicebus.Client {
	t.Helper()
	options.RetryOptions = retries
	client, err := azservicebus.NewClientFromConnectionString(connectionString, &options)
	if err != nil {
		t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	return client
}

// sendReceiveComplete sends two messages to queue, receives them with PeekLock, completes them,
// and checks that the queue is left empty.
func sendReceiveComplete(t *testing.T, client *azservicebus.Client, queue string) {
	t.Helper()
	sendTexts(t, newSender(t, client, queue), "first", "second")
	receiver := newReceiver(t, client, queue, nil)
	received := receiveExactly(t, receiver, 2)
	requireBodies(t, received, "first", "second")
	for _, message := range received {
		if message.LockToken == [16]byte{} {
			t.Fatalf("message %q was received without a lock (not PeekLock)", message.Body)
		}
	}
	complete(t, receiver, received...)
	if left := peekAll(t, receiver); len(left) != 0 {
		t.Fatalf("the queue still holds %q after completing", bodies(left))
	}
}

func TestTransportAMQPS(t *testing.T) {
	t.Parallel()
	client := newTransportClient(t, productionConnectionString, azservicebus.ClientOptions{
		CustomEndpoint: net.JoinHostPort("localhost", amqpsPort),
		TLSConfig:      trustingCA(t),
	})
	sendReceiveComplete(t, client, "q-transport-amqps")
}

func TestTransportWebSockets(t *testing.T) {
	t.Parallel()
	requested := make(chan string, 1)
	client := newTransportClient(t, productionConnectionString, azservicebus.ClientOptions{
		NewWebSocketConn: webSocketDialer(t, amqpsPort, requested),
	})
	sendReceiveComplete(t, client, "q-transport-websockets")
	requireEqual(t, "the SDK's WebSocket URL", <-requested, "wss://localhost/$servicebus/websocket")
}

// TestTransportOnePort uses one of the broker's ports for everything, for each of them: the admin
// client creates a queue over https there, AMQPS and WebSocket clients send, receive and complete
// there, and the admin client then finds the queue empty.
//
// The admin client has no CustomEndpoint: it takes the port from its connection string. The AMQP
// clients keep the production-style string: with a port in it, this SDK's amqps sends
// "localhost:PORT" as the TLS server name (the AMQP host name, ns.FQDN, which go-amqp uses as
// tls.Config.ServerName), which is no valid SNI host name.
func TestTransportOnePort(t *testing.T) {
	t.Parallel()
	for _, port := range []struct{ name, number string }{
		{"amqp", amqpPort}, {"amqps", amqpsPort}, {"admin", adminPort},
	} {
		t.Run(port.name+" port", func(t *testing.T) {
			queue := "go-transport-one-port-" + port.name
			ctx := testContext(t)

			// https: SSL_CERT_FILE (main_test.go) makes the CA a system root, as a user would.
			administration, err := admin.NewClientFromConnectionString("Endpoint=sb://localhost:"+
				port.number+"/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE", nil)
			if err != nil {
				t.Fatalf("admin.NewClientFromConnectionString: %v", err)
			}
			must[admin.CreateQueueResponse](t, "CreateQueue")(administration.CreateQueue(ctx, queue, nil))
			t.Cleanup(func() { _, _ = administration.DeleteQueue(context.Background(), queue, nil) })

			amqps := newTransportClient(t, productionConnectionString, azservicebus.ClientOptions{
				CustomEndpoint: net.JoinHostPort("localhost", port.number),
				TLSConfig:      trustingCA(t),
			})
			sendReceiveComplete(t, amqps, queue)

			webSockets := newTransportClient(t, productionConnectionString, azservicebus.ClientOptions{
				NewWebSocketConn: webSocketDialer(t, port.number, nil),
			})
			sendReceiveComplete(t, webSockets, queue)

			runtime := must[*admin.GetQueueRuntimePropertiesResponse](t, "GetQueueRuntimeProperties")(
				administration.GetQueueRuntimeProperties(ctx, queue, nil))
			if runtime == nil {
				t.Fatal("GetQueueRuntimeProperties returned nil")
			}
			requireEqual(t, "ActiveMessageCount", runtime.ActiveMessageCount, 0)
			requireEqual(t, "TotalMessageCount", runtime.TotalMessageCount, 0)
		})
	}
}
