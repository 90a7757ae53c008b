// The entities the suite declares in the broker's Config.json (the Service Bus emulator's
// format): one queue per test so that tests stay independent while sharing a broker and running
// in parallel, and the topics with their subscriptions and filter rules. Properties not listed
// keep the emulator's defaults (LockDuration PT1M, MaxDeliveryCount 3, TTL PT1H).
package sdk

type properties = map[string]any

// lockTestQueue has the shortest lock Busbar accepts, for the tests that wait for an expiry.
var lockTestQueue = properties{"LockDuration": "PT5S", "MaxDeliveryCount": 10}

var queues = map[string]properties{
	"q-send-receive":         {},
	"q-batch":                {},
	"q-receive-delete":       {},
	"q-complete":             {},
	"q-abandon":              {"MaxDeliveryCount": 10},
	"q-dead-letter":          {},
	"q-defer":                {},
	"q-lock-renew":           lockTestQueue,
	"q-lock-expiry":          lockTestQueue,
	"q-schedule":             {},
	"q-amqp-value":           {},
	"q-amqp-sequence":        {},
	"q-app-properties":       {},
	"q-session-fifo":         {"RequiresSession": true},
	"q-session-next":         {"RequiresSession": true},
	"q-session-state":        {"RequiresSession": true},
	"q-session-renew":        {"RequiresSession": true, "LockDuration": "PT5S"},
	"q-session-expiry":       {"RequiresSession": true, "LockDuration": "PT5S", "MaxDeliveryCount": 10},
	"q-session-listing":      {"RequiresSession": true},
	"q-transport-amqps":      {},
	"q-transport-websockets": {},
}

// subscriptions of a topic: name -> its rules (none: Service Bus's $Default rule, every message).
type subscriptions = map[string][]properties

var topics = map[string]subscriptions{
	"t-schedule": {"all": nil},
	"t-filters": {
		"all": nil,
		"red-sql": {{
			"Name": "red",
			"Properties": properties{
				"FilterType": "Sql",
				"SqlFilter":  properties{"SqlExpression": "color = 'red' AND quantity > 5"},
			},
		}},
		"order-correlation": {{
			"Name": "orders",
			"Properties": properties{
				"FilterType": "Correlation",
				"CorrelationFilter": properties{
					"Label":      "order",
					"Properties": properties{"priority": 1},
				},
			},
		}},
	},
}

// emulatorConfig is the Config.json document declaring queues and topics.
func emulatorConfig() any {
	queueList := []any{}
	for name, props := range queues {
		queueList = append(queueList, properties{"Name": name, "Properties": props})
	}
	topicList := []any{}
	for name, subs := range topics {
		subList := []any{}
		for sub, rules := range subs {
			if rules == nil {
				rules = []properties{}
			}
			subList = append(subList, properties{"Name": sub, "Properties": properties{}, "Rules": rules})
		}
		topicList = append(topicList, properties{
			"Name": name, "Properties": properties{}, "Subscriptions": subList,
		})
	}
	return properties{"UserConfig": properties{
		"Namespaces": []any{properties{
			"Name": "sbemulatorns", "Queues": queueList, "Topics": topicList,
		}},
		"Logging": properties{"Type": "Console"},
	}}
}
