// The administration API through the official JavaScript `ServiceBusAdministrationClient`:
// queues, topics, subscriptions and rules (SQL ones with typed parameters too) created, read,
// listed, changed and deleted while the broker runs, their runtime counts, and entities made
// through the API used over AMQP at once.
//
// Most tests use @azure/service-bus 7.10.0-beta.2 (the `service-bus-beta` alias in
// package.json), which speaks plain http natively when the connection string carries
// UseDevelopmentEmulator. One test uses the stable 7.9.5, which always builds https URLs, with
// the workaround of Microsoft's emulator sample (its getUrl and its HTTP client's sendRequest
// overridden).
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { ServiceBusAdministrationClient } = require("service-bus-beta");
const stable = require("@azure/service-bus");
const { brokerForThisFile, WAIT } = require("./broker");

const bus = brokerForThisFile({ queues: { "preconfigured": {} } });

/** The 7.10 beta's admin client, natively over plain http on the broker's admin port. */
function adminClient() {
  return new ServiceBusAdministrationClient(bus.broker.adminConnectionString);
}

/**
 * The stable 7.9.5 admin client with the emulator sample's workaround: URLs built as
 * http://localhost:PORT/… and every request allowed over an insecure connection.
 */
function stableAdminClient() {
  const admin = new stable.ServiceBusAdministrationClient(bus.broker.adminConnectionString);
  const internalClient = admin["_httpClient"];
  const originalSendRequest = internalClient.sendRequest.bind(internalClient);
  internalClient.sendRequest = async function (request) {
    request.allowInsecureConnection = true;
    return originalSendRequest(request);
  };
  const port = bus.broker.adminPort;
  admin.getUrl = function (path, queryParams) {
    const requestUrl = new URL(`http://localhost:${port}/${path}`);
    requestUrl.searchParams.set("api-version", this.serviceVersion || "2021-05");
    if (queryParams) {
      for (const [key, value] of Object.entries(queryParams)) {
        requestUrl.searchParams.set(key, value);
      }
    }
    return requestUrl.toString();
  };
  return admin;
}

/** A validator for assert.rejects: a RestError with this HTTP status and error code. */
function restError(statusCode, code) {
  return (error) => {
    assert.equal(error.name, "RestError", `not a RestError: ${error}`);
    assert.equal(error.code, code, `code of ${error}`);
    assert.equal(error.statusCode, statusCode, `statusCode of ${error}`);
    return true;
  };
}

/** Receives exactly `count` messages (several calls if the broker hands them out in parts). */
async function receiveExactly(receiver, count) {
  const received = [];
  while (received.length < count) {
    const messages = await receiver.receiveMessages(count - received.length, WAIT);
    assert.ok(messages.length > 0, `expected ${count} messages, got ${received.length}`);
    received.push(...messages);
  }
  return received;
}

async function names(iterator) {
  const found = [];
  for await (const entity of iterator) {
    found.push(entity.name ?? entity.subscriptionName);
  }
  return found;
}

test("a queue is created with non-default properties, read back equal, and refused twice", async () => {
  const admin = adminClient();
  const properties = {
    lockDuration: "PT30S",
    maxDeliveryCount: 7,
    defaultMessageTimeToLive: "P1D",
    deadLetteringOnMessageExpiration: true,
    requiresDuplicateDetection: true,
    duplicateDetectionHistoryTimeWindow: "PT2M",
    maxSizeInMegabytes: 2048,
    userMetadata: "made by the JS admin test",
  };
  const created = await admin.createQueue("js-made-by-api", properties);
  assert.equal(created.name, "js-made-by-api");
  const read = await admin.getQueue("js-made-by-api");
  assert.equal(read.name, "js-made-by-api");
  for (const [name, value] of Object.entries(properties)) {
    assert.equal(read[name], value, `${name} read back`);
    assert.equal(created[name], value, `${name} in the create response`);
  }
  assert.equal(await admin.queueExists("js-made-by-api"), true);
  await assert.rejects(
    admin.createQueue("js-made-by-api"),
    restError(409, "MessageEntityAlreadyExistsError"),
  );
});

test("a missing queue is reported as MessageEntityNotFoundError", async () => {
  const admin = adminClient();
  // As Service Bus: GET of a missing queue is 200 with an empty feed, which the SDK maps.
  await assert.rejects(admin.getQueue("js-no-such-queue"), restError(200, "MessageEntityNotFoundError"));
  await assert.rejects(
    admin.getQueueRuntimeProperties("js-no-such-queue"),
    restError(200, "MessageEntityNotFoundError"),
  );
  assert.equal(await admin.queueExists("js-no-such-queue"), false);
  await assert.rejects(admin.deleteQueue("js-no-such-queue"), restError(404, "MessageEntityNotFoundError"));
});

test("runtime properties count active, dead-lettered and scheduled messages", async () => {
  const admin = adminClient();
  await admin.createQueue("js-counted");
  // Used over AMQP at once.
  const sender = bus.client.createSender("js-counted");
  await sender.sendMessages([{ body: "m0" }, { body: "m1" }, { body: "m2" }]);
  await sender.scheduleMessages({ body: "later" }, new Date(Date.now() + 3_600_000));
  const receiver = bus.client.createReceiver("js-counted");
  const [first] = await receiveExactly(receiver, 1);
  await receiver.deadLetterMessage(first, { deadLetterReason: "test" });
  await receiver.close();
  await sender.close();

  const runtime = await admin.getQueueRuntimeProperties("js-counted");
  assert.equal(runtime.name, "js-counted");
  assert.equal(runtime.activeMessageCount, 2);
  assert.equal(runtime.deadLetterMessageCount, 1);
  assert.equal(runtime.scheduledMessageCount, 1);
  assert.equal(runtime.totalMessageCount, 4);
  assert.ok(runtime.sizeInBytes > 0, `sizeInBytes ${runtime.sizeInBytes}`);
  const listed = [];
  for await (const queue of admin.listQueuesRuntimeProperties()) {
    listed.push(queue);
  }
  const counted = listed.find((queue) => queue.name === "js-counted");
  assert.ok(counted, "js-counted is listed with its runtime properties");
  assert.equal(counted.activeMessageCount, 2);
});

test("listing queues pages past 100 entities", async () => {
  const admin = adminClient();
  const made = Array.from({ length: 105 }, (_, index) => `js-page-${String(index).padStart(3, "0")}`);
  for (let start = 0; start < made.length; start += 15) {
    await Promise.all(made.slice(start, start + 15).map((name) => admin.createQueue(name)));
  }
  const listed = await names(admin.listQueues());
  for (const name of made) {
    assert.ok(listed.includes(name), `${name} is listed`);
  }
  assert.ok(listed.includes("preconfigured"));
  assert.equal(new Set(listed).size, listed.length, "no queue is listed twice");
  const pages = [];
  for await (const page of admin.listQueues().byPage()) {
    pages.push(page.length);
  }
  assert.ok(pages.length >= 2, `pages: ${pages}`);
  assert.equal(pages[0], 100);
  assert.equal(pages.reduce((sum, size) => sum + size, 0), listed.length);
  const small = [];
  for await (const page of admin.listQueues().byPage({ maxPageSize: 40 })) {
    small.push(page.length);
  }
  assert.equal(small[0], 40);
  assert.equal(small.reduce((sum, size) => sum + size, 0), listed.length);
});

test("an update of the lock duration takes effect", async () => {
  const admin = adminClient();
  await admin.createQueue("js-lock-change", { lockDuration: "PT10S", maxDeliveryCount: 3 });
  const queue = await admin.getQueue("js-lock-change");
  assert.equal(queue.lockDuration, "PT10S");
  queue.lockDuration = "PT2M";
  const updated = await admin.updateQueue(queue);
  assert.equal(updated.lockDuration, "PT2M");
  const read = await admin.getQueue("js-lock-change");
  assert.equal(read.lockDuration, "PT2M");
  assert.equal(read.maxDeliveryCount, 3, "the update keeps the other properties");

  const sender = bus.client.createSender("js-lock-change");
  await sender.sendMessages({ body: "held" });
  const receiver = bus.client.createReceiver("js-lock-change");
  const [message] = await receiveExactly(receiver, 1);
  const heldFor = message.lockedUntilUtc.getTime() - Date.now();
  assert.ok(heldFor > 90_000, `lock held for ${heldFor} ms`);
  await receiver.completeMessage(message);
  await receiver.close();
  await sender.close();
});

test("a deleted queue is gone from reads, lists and AMQP", async () => {
  const admin = adminClient();
  await admin.createQueue("js-short-lived");
  const sender = bus.client.createSender("js-short-lived");
  await sender.sendMessages({ body: "gone with it" });
  await sender.close();
  await admin.deleteQueue("js-short-lived");
  await assert.rejects(admin.getQueue("js-short-lived"), restError(200, "MessageEntityNotFoundError"));
  assert.equal(await admin.queueExists("js-short-lived"), false);
  assert.ok(!(await names(admin.listQueues())).includes("js-short-lived"));
  const refused = bus.client.createSender("js-short-lived");
  await assert.rejects(refused.sendMessages({ body: "refused" }), (error) => {
    assert.equal(error.code, "MessagingEntityNotFound", `${error}`);
    return true;
  });
  await refused.close();
});

test("topics, subscriptions and SQL rules are managed and route messages", async () => {
  const admin = adminClient();
  const topic = await admin.createTopic("js-api-topic", { defaultMessageTimeToLive: "PT2H" });
  assert.equal(topic.name, "js-api-topic");
  assert.equal((await admin.getTopic("js-api-topic")).defaultMessageTimeToLive, "PT2H");
  await assert.rejects(admin.createTopic("js-api-topic"), restError(409, "MessageEntityAlreadyExistsError"));

  await admin.createSubscription("js-api-topic", "everything", { maxDeliveryCount: 5 });
  await admin.createSubscription("js-api-topic", "red-only", { lockDuration: "PT45S" });
  const subscription = await admin.getSubscription("js-api-topic", "red-only");
  assert.equal(subscription.subscriptionName, "red-only");
  assert.equal(subscription.topicName, "js-api-topic");
  assert.equal(subscription.lockDuration, "PT45S");
  assert.deepEqual(await names(admin.listSubscriptions("js-api-topic")), ["everything", "red-only"]);

  const rule = await admin.createRule("js-api-topic", "red-only", "red", { sqlExpression: "color = 'red'" });
  assert.equal(rule.name, "red");
  await admin.deleteRule("js-api-topic", "red-only", "$Default");
  const read = await admin.getRule("js-api-topic", "red-only", "red");
  assert.equal(read.filter.sqlExpression, "color = 'red'");
  assert.deepEqual(await names(admin.listRules("js-api-topic", "red-only")), ["red"]);
  const defaultRule = await admin.getRule("js-api-topic", "everything", "$Default");
  assert.equal(defaultRule.filter.sqlExpression, "1=1");
  await assert.rejects(
    admin.createRule("js-api-topic", "red-only", "red", { sqlExpression: "1=1" }),
    restError(409, "MessageEntityAlreadyExistsError"),
  );
  await assert.rejects(
    admin.getRule("js-api-topic", "red-only", "$Default"),
    restError(404, "MessageEntityNotFoundError"),
  );
  await assert.rejects(
    admin.getSubscription("js-api-topic", "no-such-subscription"),
    restError(404, "MessageEntityNotFoundError"),
  );

  const sender = bus.client.createSender("js-api-topic");
  await sender.sendMessages([
    { body: "r", applicationProperties: { color: "red" } },
    { body: "b", applicationProperties: { color: "blue" } },
  ]);
  await sender.close();
  const redOnly = bus.client.createReceiver("js-api-topic", "red-only", { receiveMode: "receiveAndDelete" });
  assert.deepEqual((await receiveExactly(redOnly, 1)).map((message) => message.body), ["r"]);
  assert.deepEqual(await redOnly.receiveMessages(1, { maxWaitTimeInMs: 500 }), []);
  await redOnly.close();
  const everything = await admin.getSubscriptionRuntimeProperties("js-api-topic", "everything");
  assert.equal(everything.activeMessageCount, 2);
  const topicRuntime = await admin.getTopicRuntimeProperties("js-api-topic");
  assert.equal(topicRuntime.subscriptionCount, 2);

  await admin.deleteRule("js-api-topic", "red-only", "red");
  assert.deepEqual(await names(admin.listRules("js-api-topic", "red-only")), []);
  await admin.deleteSubscription("js-api-topic", "everything");
  await assert.rejects(
    admin.getSubscription("js-api-topic", "everything"),
    restError(404, "MessageEntityNotFoundError"),
  );
  await admin.deleteTopic("js-api-topic");
  await assert.rejects(admin.getTopic("js-api-topic"), restError(200, "MessageEntityNotFoundError"));
  assert.equal(await admin.topicExists("js-api-topic"), false);
});

test("SQL rules with typed parameters read back as sent and route messages", async () => {
  const admin = adminClient();
  await admin.createTopic("js-param-topic");
  await admin.createSubscription("js-param-topic", "typed");
  await admin.deleteRule("js-param-topic", "typed", "$Default");
  const since = new Date("2024-01-02T03:04:05.000Z");
  const sqlParameters = { "@c": "red", "@n": 3, "@urgent": true, "@since": since };
  const sqlExpression = "color = @c AND size > @n AND urgent = @urgent AND at > @since";
  const action = { sqlExpression: "SET sys.Label = @l", sqlParameters: { "@l": "routed" } };
  await admin.createRule("js-param-topic", "typed", "red-and-big", { sqlExpression, sqlParameters }, action);
  const listed = [];
  for await (const rule of admin.listRules("js-param-topic", "typed")) {
    listed.push(rule);
  }
  assert.equal(listed.length, 1);
  for (const rule of [await admin.getRule("js-param-topic", "typed", "red-and-big"), listed[0]]) {
    assert.equal(rule.filter.sqlExpression, sqlExpression);
    assert.deepEqual(rule.filter.sqlParameters, sqlParameters);
    assert.equal(rule.action.sqlExpression, action.sqlExpression);
    assert.deepEqual(rule.action.sqlParameters, action.sqlParameters);
  }
  await assert.rejects(
    admin.createRule("js-param-topic", "typed", "unbound", { sqlExpression: "color = @missing" }),
    (error) => error.statusCode === 400 && /'@missing' is not defined/.test(error.message),
  );

  const matching = { color: "red", size: 4, urgent: true, at: new Date("2024-01-03T00:00:00.000Z") };
  const sender = bus.client.createSender("js-param-topic");
  await sender.sendMessages([
    { body: "match", applicationProperties: matching },
    { body: "small", applicationProperties: { ...matching, size: 3 } },
    { body: "early", applicationProperties: { ...matching, at: since } },
  ]);
  await sender.close();
  const runtime = await admin.getSubscriptionRuntimeProperties("js-param-topic", "typed");
  assert.equal(runtime.activeMessageCount, 1);
  const receiver = bus.client.createReceiver("js-param-topic", "typed", { receiveMode: "receiveAndDelete" });
  const [message] = await receiveExactly(receiver, 1);
  assert.equal(message.body, "match");
  assert.equal(message.subject, "routed");
  await receiver.close();
  await admin.deleteTopic("js-param-topic");
});

test("a token signed with the wrong key is refused with 401", async () => {
  const wrong = new ServiceBusAdministrationClient(
    bus.broker.adminConnectionString.replace("SAS_KEY_VALUE", "NOT_THE_KEY"),
  );
  await assert.rejects(wrong.getQueue("preconfigured"), restError(401, "UnauthorizedRequestError"));
  await assert.rejects(wrong.createQueue("js-never-made"), restError(401, "UnauthorizedRequestError"));
  assert.equal(await adminClient().queueExists("js-never-made"), false);
});

test("the stable 7.9.5 admin client works with the emulator sample's workaround", async () => {
  const admin = stableAdminClient();
  await admin.createQueue("js-stable", { lockDuration: "PT45S", maxDeliveryCount: 4 });
  const read = await admin.getQueue("js-stable");
  assert.equal(read.lockDuration, "PT45S");
  assert.equal(read.maxDeliveryCount, 4);
  await assert.rejects(admin.createQueue("js-stable"), restError(409, "MessageEntityAlreadyExistsError"));
  const sender = bus.client.createSender("js-stable");
  await sender.sendMessages({ body: "stable" });
  await sender.close();
  assert.equal((await admin.getQueueRuntimeProperties("js-stable")).activeMessageCount, 1);
  await admin.deleteQueue("js-stable");
  await assert.rejects(admin.getQueue("js-stable"), restError(200, "MessageEntityNotFoundError"));
});

test("the stable 7.9.5 client speaks https to the admin port unchanged, trusting the development CA", async () => {
  const fs = require("node:fs");
  const admin = new stable.ServiceBusAdministrationClient(bus.broker.adminConnectionString, {
    tlsOptions: { ca: fs.readFileSync(bus.broker.adminCaFile) },
  });
  await admin.createQueue("over-https", { maxDeliveryCount: 4 });
  const queue = await admin.getQueue("over-https");
  assert.equal(queue.maxDeliveryCount, 4);
  const runtime = await admin.getQueueRuntimeProperties("over-https");
  assert.equal(runtime.activeMessageCount, 0);
  await admin.deleteQueue("over-https");
  assert.equal(await admin.queueExists("over-https"), false);
});
