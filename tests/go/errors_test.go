// A queue that does not exist: sending to it and receiving from it each fail with an
// *azservicebus.Error whose Code is CodeNotFound.
package sdk

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

func TestAMissingQueueIsNotFound(t *testing.T) {
	t.Parallel()
	t.Run("send", func(t *testing.T) {
		err := newSender(t, newClient(t), "q-missing").SendMessage(testContext(t),
			&azservicebus.Message{Body: []byte("lost")}, nil)
		requireCode(t, err, azservicebus.CodeNotFound, "SendMessage to a missing queue")
	})
	t.Run("receive", func(t *testing.T) {
		_, err := newReceiver(t, newClient(t), "q-missing", nil).ReceiveMessages(testContext(t), 1, nil)
		requireCode(t, err, azservicebus.CodeNotFound, "ReceiveMessages from a missing queue")
	})
}
