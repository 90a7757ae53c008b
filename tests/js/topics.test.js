// Topics through the official JavaScript SDK: fan-out to subscriptions, filters from the
// configuration, rules managed at run time (createRule / deleteRule / getRules), and a
// subscription's dead-letter queue.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { brokerForThisFile, WAIT } = require("./broker");

const sqlRule = (name, expression) => ({
  Name: name,
  Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: expression } },
});

const TOPICS = {
  orders: {
    all: {},
    red: { Rules: [sqlRule("red", "color = 'red'")] },
  },
  managed: { dynamic: {} },
  "dead-letters": { only: {} },
};

const bus = brokerForThisFile({ topics: TOPICS });

async function bodies(topic, subscription, count) {
  const receiver = bus.client.createReceiver(topic, subscription, { receiveMode: "receiveAndDelete" });
  const received = [];
  while (received.length < count) {
    const messages = await receiver.receiveMessages(count - received.length, WAIT);
    assert.ok(messages.length > 0, `${subscription}: expected ${count}, got ${received.length}`);
    received.push(...messages.map((message) => message.body));
  }
  assert.deepEqual(await receiver.peekMessages(1), [], `${subscription} has more than ${count}`);
  await receiver.close();
  return received;
}

test("every subscription gets a copy, filtered by its rules", async () => {
  const sender = bus.client.createSender("orders");
  await sender.sendMessages([
    { body: "red one", applicationProperties: { color: "red" } },
    { body: "blue one", applicationProperties: { color: "blue" } },
  ]);
  assert.deepEqual(await bodies("orders", "all", 2), ["red one", "blue one"]);
  assert.deepEqual(await bodies("orders", "red", 1), ["red one"]);
  await sender.close();
});

/** Every rule of a subscription, through the SDK's paged listing. */
async function listRules(rules) {
  const listed = [];
  for await (const rule of rules.listRules()) {
    listed.push(rule);
  }
  return listed;
}

test("rules added and removed at run time change routing", async () => {
  const rules = bus.client.createRuleManager("managed", "dynamic");
  assert.deepEqual((await listRules(rules)).map((rule) => rule.name), ["$Default"]);
  await rules.createRule("big", { sqlExpression: "quantity > 10" });
  await rules.deleteRule("$Default");
  const listed = await listRules(rules);
  assert.deepEqual(listed.map((rule) => rule.name), ["big"]);
  assert.equal(listed[0].filter.sqlExpression, "quantity > 10");

  const sender = bus.client.createSender("managed");
  await sender.sendMessages([
    { body: "small", applicationProperties: { quantity: 2 } },
    { body: "large", applicationProperties: { quantity: 50 } },
  ]);
  assert.deepEqual(await bodies("managed", "dynamic", 1), ["large"]);
  await sender.close();
});

test("a subscription's dead-letter queue keeps the reason", async () => {
  const sender = bus.client.createSender("dead-letters");
  await sender.sendMessages({ body: "reject me" });
  const receiver = bus.client.createReceiver("dead-letters", "only");
  const [message] = await receiver.receiveMessages(1, WAIT);
  await receiver.deadLetterMessage(message, { deadLetterReason: "Rejected" });
  const deadLetters = bus.client.createReceiver("dead-letters", "only", { subQueueType: "deadLetter" });
  const [dead] = await deadLetters.receiveMessages(1, WAIT);
  assert.equal(dead.body, "reject me");
  assert.equal(dead.deadLetterReason, "Rejected");
  await deadLetters.completeMessage(dead);
  await receiver.close();
  await deadLetters.close();
  await sender.close();
});
