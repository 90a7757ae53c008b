// Every way Service Bus is reached, with the official JavaScript SDK unchanged: a
// production-style connection string (no UseDevelopmentEmulator), the broker's CA trusted
// (NODE_EXTRA_CA_CERTS, set by tests/js_sdk.rs), and `customEndpointAddress` pointing the client
// at Busbar's port.
// - AMQPS: AMQP over TLS on the --tls-listen port.
// - AMQP over WebSockets: `webSocketOptions` with the `ws` package, wss://…/$servicebus/websocket.
// - One port for everything: plain AMQP (the emulator's string), AMQPS, WebSockets and the
//   admin client's https all reach the same port, told apart by their first bytes.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const WebSocket = require("ws");
const { ServiceBusAdministrationClient, ServiceBusClient } = require("@azure/service-bus");
const { brokerForThisFile, WAIT } = require("./broker");

const bus = brokerForThisFile({ queues: { amqps: {}, websocket: {}, "one-port": {} } });

const PRODUCTION =
  "Endpoint=sb://localhost/;SharedAccessKeyName=RootManageSharedAccessKey;" +
  "SharedAccessKey=SAS_KEY_VALUE";

/** A client with the production-style string reaching `port`, over WebSockets if asked. */
function productionClient(port, { webSockets = false } = {}) {
  const options = { customEndpointAddress: `https://localhost:${port}` };
  if (webSockets) options.webSocketOptions = { webSocket: WebSocket };
  return new ServiceBusClient(PRODUCTION, options);
}

/** Sends `body`, receives it with a peek-lock, completes it, and checks nothing is left. */
async function roundTrip(client, queue, body) {
  const sender = client.createSender(queue);
  await sender.sendMessages({ body, applicationProperties: { via: body } });
  await sender.close();
  const receiver = client.createReceiver(queue);
  const [message] = await receiver.receiveMessages(1, WAIT);
  assert.ok(message, `nothing received over ${body}`);
  assert.equal(message.body, body);
  assert.equal(message.applicationProperties.via, body);
  await receiver.completeMessage(message);
  assert.deepEqual(await receiver.peekMessages(10), []);
  await receiver.close();
}

test("AMQPS with a production connection string", async () => {
  const client = productionClient(bus.broker.amqpsPort);
  try {
    await roundTrip(client, "amqps", "over tls");
  } finally {
    await client.close();
  }
});

test("AMQP over WebSockets with TLS", async () => {
  const client = productionClient(bus.broker.adminPort, { webSockets: true });
  try {
    await roundTrip(client, "websocket", "over a websocket");
  } finally {
    await client.close();
  }
});

test("one port serves AMQP, AMQPS, WebSockets and the admin API", async () => {
  const port = bus.broker.amqpsPort;
  const emulator =
    `Endpoint=sb://localhost:${port};SharedAccessKeyName=RootManageSharedAccessKey;` +
    "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
  const clients = [
    ["plain amqp", new ServiceBusClient(emulator)],
    ["amqps", productionClient(port)],
    ["websocket", productionClient(port, { webSockets: true })],
  ];
  for (const [via, client] of clients) {
    try {
      await roundTrip(client, "one-port", via);
    } finally {
      await client.close();
    }
  }
  // The stable 7.9.5 admin client speaks https to the connection string's port.
  const admin = new ServiceBusAdministrationClient(PRODUCTION.replace("sb://localhost/", `sb://localhost:${port}/`));
  const runtime = await admin.getQueueRuntimeProperties("one-port");
  assert.equal(runtime.totalMessageCount, 0);
});
