// The broker's controls over its admin port: entities through the Service Bus administration
// API (ATOM/XML) and Busbar's test controls (/$busbar/…), signed with a SAS token.
package busbartest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

const serviceBusNamespace = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"

type controls struct{ endpoint string }

func sasToken(target string) string {
	audience := url.QueryEscape(target)
	expiry := time.Now().Add(time.Hour).Unix()
	mac := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(mac, "%s\n%d", audience, expiry)
	signature := url.QueryEscape(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return fmt.Sprintf("SharedAccessSignature sr=%s&sig=%s&se=%d&skn=%s", audience, signature, expiry, keyName)
}

func entityPath(entity string) string {
	segments := strings.Split(entity, "/")
	for i, segment := range segments {
		segments[i] = url.PathEscape(segment)
	}
	return strings.Join(segments, "/")
}

// request sends one request and returns the answer's body, or an error unless it is 2xx.
func (c controls) request(method, path, body, contentType string) ([]byte, error) {
	target := c.endpoint + path
	request, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	request.Header.Set("Authorization", sasToken(target))
	if body != "" {
		request.Header.Set("Content-Type", contentType)
	}
	answer, err := http.DefaultClient.Do(request)
	if err != nil {
		return nil, err
	}
	defer answer.Body.Close()
	text, err := io.ReadAll(answer.Body)
	if err != nil {
		return nil, err
	}
	if answer.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, answer.StatusCode, text)
	}
	return text, nil
}

func (c controls) post(path string, document any) ([]byte, error) {
	body := ""
	if document != nil {
		encoded, err := json.Marshal(document)
		if err != nil {
			return nil, err
		}
		body = string(encoded)
	}
	return c.request(http.MethodPost, path, body, "application/json")
}

func (c controls) putEntity(path, kind string, properties map[string]any) error {
	names := make([]string, 0, len(properties))
	for name := range properties {
		names = append(names, name)
	}
	sort.Strings(names)
	var elements strings.Builder
	for _, name := range names {
		fmt.Fprintf(&elements, "<%s>", name)
		xml.EscapeText(&elements, []byte(fmt.Sprint(properties[name])))
		fmt.Fprintf(&elements, "</%s>", name)
	}
	body := fmt.Sprintf(`<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">`+
		`<%s xmlns="%s">%s</%s></content></entry>`, kind, serviceBusNamespace, elements.String(), kind)
	_, err := c.request(http.MethodPut, "/"+entityPath(path), body, "application/atom+xml")
	return err
}

// CreateQueue creates a queue with Service Bus property names ({"RequiresSession": true}).
func (b *Broker) CreateQueue(name string, properties map[string]any) error {
	return b.controls.putEntity(name, "QueueDescription", properties)
}

// CreateTopic creates a topic.
func (b *Broker) CreateTopic(name string, properties map[string]any) error {
	return b.controls.putEntity(name, "TopicDescription", properties)
}

// CreateSubscription creates a subscription of a topic.
func (b *Broker) CreateSubscription(topic, name string, properties map[string]any) error {
	return b.controls.putEntity(topic+"/Subscriptions/"+name, "SubscriptionDescription", properties)
}

// Purge removes an entity's messages (only its dead-letter queue's with deadLetter).
func (b *Broker) Purge(entity string, deadLetter bool) (int, error) {
	path := "/$busbar/purge/" + entityPath(entity)
	if deadLetter {
		path += "?deadLetter=true"
	}
	text, err := b.controls.post(path, nil)
	if err != nil {
		return 0, err
	}
	var answer struct{ Purged int }
	err = json.Unmarshal(text, &answer)
	return answer.Purged, err
}

// Reset brings the namespace back to its configured entities, empty; others are deleted.
func (b *Broker) Reset() error {
	_, err := b.controls.post("/$busbar/reset", nil)
	return err
}

// AdvanceClock moves the virtual clock ahead: schedules, TTLs and locks come due at once.
func (b *Broker) AdvanceClock(by time.Duration) error {
	_, err := b.controls.post(fmt.Sprintf("/$busbar/clock/advance?by=%dms", by.Milliseconds()), nil)
	return err
}

// Fault arms a fault on an entity: "server-busy" or "lock-lost" for the next count sends or
// settlements (see docs/test-controls.md for "detach-link", "drop-connection" and "delay",
// which FaultWith takes).
func (b *Broker) Fault(entity, kind string, count int) error {
	return b.FaultWith(entity, map[string]any{"kind": kind, "count": count})
}

// FaultWith arms a fault given as its JSON document ({"kind": "delay", "millis": 1500}).
func (b *Broker) FaultWith(entity string, document map[string]any) error {
	_, err := b.controls.post("/$busbar/faults/"+entityPath(entity), document)
	return err
}
