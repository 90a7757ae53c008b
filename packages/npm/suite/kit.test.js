// The Node.js test kit in a fresh project: the file's broker with the official SDK (send and
// receive over AMQP and AMQPS, a session, a dead-letter, a schedule brought due by the clock, a
// fault raised and retried), reset between tests, and a broker of a test's own.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const { ServiceBusClient } = require("@azure/service-bus");
const { startBusbar, useBusbar } = require("busbar");

const busbar = useBusbar();
const WAIT = { maxWaitTimeInMs: 10_000 };

async function withClient(use, options) {
  const client = new ServiceBusClient(busbar.connectionString, options);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

async function receiveOne(client, queue, options) {
  const receiver = client.createReceiver(queue, options);
  const [message] = await receiver.receiveMessages(1, WAIT);
  await receiver.completeMessage(message);
  await receiver.close();
  return message;
}

test("send and receive over AMQP", () =>
  withClient(async (client) => {
    await client.createSender("queue.1").sendMessages({ body: "hello" });
    assert.equal((await receiveOne(client, "queue.1")).body, "hello");
  }));

test("send over AMQPS with the production connection string and the CA trusted", () => {
  // Node reads the CAs it trusts at start: a child process with NODE_EXTRA_CA_CERTS set.
  const script = `
    const { ServiceBusClient } = require("@azure/service-bus");
    const client = new ServiceBusClient(process.argv[1], { customEndpointAddress: process.argv[2] });
    client.createSender("queue.1").sendMessages({ body: "over tls" }).then(() => client.close());`;
  execFileSync(process.execPath, ["-e", script, busbar.productionConnectionString, busbar.amqpsEndpoint],
    { env: { ...process.env, NODE_EXTRA_CA_CERTS: busbar.caFile }, stdio: "inherit" });
  return withClient(async (client) =>
    assert.equal((await receiveOne(client, "queue.1")).body, "over tls"));
});

test("a session queue created for the test", async () => {
  await busbar.createQueue("orders", { RequiresSession: true });
  await withClient(async (client) => {
    await client.createSender("orders").sendMessages([1, 2].map((n) => ({ body: `step ${n}`, sessionId: "cart-7" })));
    const receiver = await client.acceptSession("orders", "cart-7");
    const received = [];
    while (received.length < 2) received.push(...(await receiver.receiveMessages(2 - received.length, WAIT)));
    assert.deepEqual(received.map((m) => m.body), ["step 1", "step 2"]);
    await receiver.setSessionState("paid");
    assert.equal(String(await receiver.getSessionState()), "paid");
    await receiver.close();
  });
});

test("a dead-letter", () =>
  withClient(async (client) => {
    await client.createSender("queue.1").sendMessages({ body: "poison" });
    const receiver = client.createReceiver("queue.1");
    const [message] = await receiver.receiveMessages(1, WAIT);
    await receiver.deadLetterMessage(message, { deadLetterReason: "bad", deadLetterErrorDescription: "unreadable" });
    await receiver.close();
    const dead = await receiveOne(client, "queue.1", { subQueueType: "deadLetter" });
    assert.deepEqual([dead.body, dead.deadLetterReason], ["poison", "bad"]);
  }));

test("a message scheduled an hour ahead is brought due by the clock", () =>
  withClient(async (client) => {
    const inAnHour = new Date(Date.now() + 3_600_000);
    await client.createSender("queue.1").scheduleMessages({ body: "later" }, inAnHour);
    await busbar.advanceClock("61m"); // queue.1's messages live an hour
    assert.equal((await receiveOne(client, "queue.1")).body, "later");
  }));

test("a fault is raised without retries and retried away with them", async () => {
  await busbar.fault("queue.1", "server-busy");
  await withClient(async (strict) => {
    await assert.rejects(strict.createSender("queue.1").sendMessages({ body: "refused" }),
      (error) => error.code === "ServiceBusy");
  }, { retryOptions: { maxRetries: 0 } });
  await busbar.fault("queue.1", "server-busy", { count: 1 });
  await withClient(async (client) => {
    await client.createSender("queue.1").sendMessages({ body: "retried" });
    assert.equal((await receiveOne(client, "queue.1")).body, "retried");
  }, { retryOptions: { retryDelayInMs: 100 } });
});

test("reset, first: a test leaves a message and a queue behind", async () => {
  await busbar.createQueue("left-over");
  await withClient((client) => client.createSender("queue.1").sendMessages({ body: "left behind" }));
});

test("reset, then: the next test starts empty", async () => {
  await withClient(async (client) => {
    const receiver = client.createReceiver("queue.1");
    assert.deepEqual(await receiver.peekMessages(10), []);
    await receiver.close();
  });
  await assert.rejects(busbar.purge("left-over"), /404/);
});

test("a broker of its own with file storage and a config", async () => {
  const config = { UserConfig: { Namespaces: [{ Name: "sbemulatorns", Topics: [],
    Queues: [{ Name: "jobs", Properties: { MaxDeliveryCount: 1 } }] }], Logging: { Type: "Console" } } };
  const own = await startBusbar({ storage: "file", config });
  try {
    const client = new ServiceBusClient(own.connectionString);
    await client.createSender("jobs").sendMessages({ body: "kept on disk" });
    await client.close();
    assert.equal(await own.purge("jobs"), 1);
  } finally {
    await own.stop();
  }
});
