// Queues through the official JavaScript SDK (@azure/service-bus): send and receive in both
// receive modes, batches, settlement (complete, abandon, dead-letter, defer), peek, scheduling,
// lock renewal, and the errors the SDK maps from the broker's conditions.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { isServiceBusError } = require("@azure/service-bus");
const { brokerForThisFile, WAIT } = require("./broker");

const QUEUES = {
  "send-receive": {},
  batch: {},
  "receive-and-delete": {},
  abandon: { MaxDeliveryCount: 10 },
  "dead-letter": {},
  "max-delivery": { MaxDeliveryCount: 1 },
  defer: {},
  peek: {},
  schedule: {},
  renew: {},
  streaming: {},
  oversize: {},
};

const bus = brokerForThisFile({ queues: QUEUES });

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

test("a sent message arrives with its body and properties and is completed once", async () => {
  const sender = bus.client.createSender("send-receive");
  await sender.sendMessages({
    body: { hello: "world" },
    messageId: "m-1",
    correlationId: "c-1",
    subject: "greeting",
    contentType: "application/json",
    applicationProperties: { color: "red", count: 3 },
  });
  const receiver = bus.client.createReceiver("send-receive");
  const [message] = await receiveExactly(receiver, 1);
  assert.deepEqual(message.body, { hello: "world" });
  assert.equal(message.messageId, "m-1");
  assert.equal(message.correlationId, "c-1");
  assert.equal(message.subject, "greeting");
  assert.equal(message.contentType, "application/json");
  assert.deepEqual(message.applicationProperties, { color: "red", count: 3 });
  assert.equal(message.deliveryCount, 0);
  assert.ok(message.sequenceNumber.toNumber() >= 1);
  assert.ok(message.lockedUntilUtc > new Date());
  await receiver.completeMessage(message);
  assert.deepEqual(await receiver.peekMessages(1), []);
  await sender.close();
  await receiver.close();
});

test("a batch of 100 arrives complete and in order", async () => {
  const sender = bus.client.createSender("batch");
  const batch = await sender.createMessageBatch();
  for (let index = 0; index < 100; index++) {
    assert.ok(batch.tryAddMessage({ body: `message ${index}` }));
  }
  await sender.sendMessages(batch);
  const receiver = bus.client.createReceiver("batch", { receiveMode: "receiveAndDelete" });
  const messages = await receiveExactly(receiver, 100);
  assert.deepEqual(
    messages.map((message) => message.body),
    Array.from({ length: 100 }, (_, index) => `message ${index}`),
  );
  await sender.close();
  await receiver.close();
});

test("receive-and-delete removes the message when it is handed out", async () => {
  const sender = bus.client.createSender("receive-and-delete");
  await sender.sendMessages([{ body: "one" }, { body: "two" }]);
  const receiver = bus.client.createReceiver("receive-and-delete", { receiveMode: "receiveAndDelete" });
  const messages = await receiveExactly(receiver, 2);
  assert.deepEqual(messages.map((message) => message.body), ["one", "two"]);
  await assert.rejects(receiver.completeMessage(messages[0]), /receiveAndDelete/);
  assert.deepEqual(await receiver.peekMessages(10), []);
  await sender.close();
  await receiver.close();
});

test("an abandoned message comes back with its delivery count raised", async () => {
  const sender = bus.client.createSender("abandon");
  await sender.sendMessages({ body: "again" });
  const receiver = bus.client.createReceiver("abandon");
  const [first] = await receiveExactly(receiver, 1);
  await receiver.abandonMessage(first);
  const [second] = await receiveExactly(receiver, 1);
  assert.equal(second.body, "again");
  assert.equal(second.deliveryCount, 1);
  assert.equal(second.sequenceNumber.toString(), first.sequenceNumber.toString());
  await receiver.completeMessage(second);
  await sender.close();
  await receiver.close();
});

test("a dead-lettered message is read from the dead-letter queue with its reason", async () => {
  const sender = bus.client.createSender("dead-letter");
  await sender.sendMessages({ body: "bad" });
  const receiver = bus.client.createReceiver("dead-letter");
  const [message] = await receiveExactly(receiver, 1);
  await receiver.deadLetterMessage(message, {
    deadLetterReason: "Validation",
    deadLetterErrorDescription: "field x is missing",
  });
  const deadLetters = bus.client.createReceiver("dead-letter", { subQueueType: "deadLetter" });
  const [dead] = await receiveExactly(deadLetters, 1);
  assert.equal(dead.body, "bad");
  assert.equal(dead.deadLetterReason, "Validation");
  assert.equal(dead.deadLetterErrorDescription, "field x is missing");
  await deadLetters.completeMessage(dead);
  assert.deepEqual(await receiver.peekMessages(1), []);
  await sender.close();
  await receiver.close();
  await deadLetters.close();
});

test("MaxDeliveryCount moves a message to the dead-letter queue", async () => {
  const sender = bus.client.createSender("max-delivery");
  await sender.sendMessages({ body: "poison" });
  const receiver = bus.client.createReceiver("max-delivery");
  const [message] = await receiveExactly(receiver, 1);
  await receiver.abandonMessage(message);
  const deadLetters = bus.client.createReceiver("max-delivery", { subQueueType: "deadLetter" });
  const [dead] = await receiveExactly(deadLetters, 1);
  assert.equal(dead.body, "poison");
  assert.equal(dead.deadLetterReason, "MaxDeliveryCountExceeded");
  assert.deepEqual(await receiver.peekMessages(1), []);
  await sender.close();
  await receiver.close();
  await deadLetters.close();
});

test("a deferred message is fetched by its sequence number", async () => {
  const sender = bus.client.createSender("defer");
  await sender.sendMessages({ body: "later" });
  const receiver = bus.client.createReceiver("defer");
  const [message] = await receiveExactly(receiver, 1);
  await receiver.deferMessage(message);
  assert.deepEqual(await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 }), []);
  const [deferred] = await receiver.receiveDeferredMessages([message.sequenceNumber]);
  assert.equal(deferred.body, "later");
  assert.equal(deferred.state, "deferred");
  await receiver.completeMessage(deferred);
  await assert.rejects(receiver.receiveDeferredMessages([message.sequenceNumber]), (error) => {
    assert.equal(error.code, "MessageNotFound");
    return true;
  });
  await sender.close();
  await receiver.close();
});

test("peek shows messages without locking them", async () => {
  const sender = bus.client.createSender("peek");
  await sender.sendMessages([{ body: "a" }, { body: "b" }, { body: "c" }]);
  const receiver = bus.client.createReceiver("peek");
  const peeked = await receiver.peekMessages(10);
  assert.deepEqual(peeked.map((message) => message.body), ["a", "b", "c"]);
  const [first] = await receiveExactly(receiver, 1);
  assert.equal(first.body, "a");
  await receiver.completeMessage(first);
  const rest = await receiver.peekMessages(10, { fromSequenceNumber: peeked[1].sequenceNumber });
  assert.deepEqual(rest.map((message) => message.body), ["b", "c"]);
  await sender.close();
  await receiver.close();
});

test("a scheduled message stays hidden and a cancelled one never arrives", async () => {
  const sender = bus.client.createSender("schedule");
  const inAnHour = new Date(Date.now() + 3_600_000);
  const [kept, cancelled] = await sender.scheduleMessages(
    [{ body: "kept" }, { body: "cancelled" }],
    inAnHour,
  );
  await sender.cancelScheduledMessages([cancelled]);
  const receiver = bus.client.createReceiver("schedule");
  const peeked = await receiver.peekMessages(10);
  assert.deepEqual(peeked.map((message) => message.body), ["kept"]);
  assert.equal(peeked[0].sequenceNumber.toString(), kept.toString());
  assert.equal(peeked[0].state, "scheduled");
  assert.equal(peeked[0].scheduledEnqueueTimeUtc.getTime(), Math.floor(inAnHour.getTime()));
  assert.deepEqual(await receiver.receiveMessages(1, { maxWaitTimeInMs: 500 }), []);
  await sender.close();
  await receiver.close();
});

test("a message lock is renewed by its owner", async () => {
  const sender = bus.client.createSender("renew");
  await sender.sendMessages({ body: "long job" });
  const receiver = bus.client.createReceiver("renew");
  const [message] = await receiveExactly(receiver, 1);
  const before = message.lockedUntilUtc;
  const renewed = await receiver.renewMessageLock(message);
  assert.ok(renewed >= before, `renewed ${renewed.toISOString()} before ${before.toISOString()}`);
  await receiver.completeMessage(message);
  await sender.close();
  await receiver.close();
});

test("a subscribed handler receives every message", async () => {
  const sender = bus.client.createSender("streaming");
  await sender.sendMessages(Array.from({ length: 20 }, (_, index) => ({ body: index })));
  const receiver = bus.client.createReceiver("streaming");
  const seen = [];
  await new Promise((resolve, reject) => {
    receiver.subscribe({
      processMessage: async (message) => {
        seen.push(message.body);
        if (seen.length === 20) resolve();
      },
      processError: async ({ error }) => reject(error),
    });
  });
  assert.deepEqual(seen, Array.from({ length: 20 }, (_, index) => index));
  await receiver.close();
  await sender.close();
});

test("an unknown queue is reported as MessagingEntityNotFound", async () => {
  const sender = bus.client.createSender("no-such-queue");
  await assert.rejects(sender.sendMessages({ body: "x" }), (error) => {
    assert.ok(isServiceBusError(error), `not a ServiceBusError: ${error}`);
    assert.equal(error.code, "MessagingEntityNotFound");
    return true;
  });
  await sender.close();
});

test("a message far over the size limit is rejected as MessageSizeExceeded and the sender goes on", async () => {
  const sender = bus.client.createSender("oversize");
  // 1.5 MiB: past the 256 KiB limit and past what the broker reads whole (it counts and drops).
  await assert.rejects(sender.sendMessages({ body: "x".repeat(1536 * 1024) }), (error) => {
    assert.ok(isServiceBusError(error), `not a ServiceBusError: ${error}`);
    assert.equal(error.code, "MessageSizeExceeded");
    assert.match(error.message, /exceeds the limit \(262144 bytes\) currently allowed on the link/);
    return true;
  });
  await sender.sendMessages({ body: "small" });
  const receiver = bus.client.createReceiver("oversize", { receiveMode: "receiveAndDelete" });
  const [message] = await receiveExactly(receiver, 1);
  assert.equal(message.body, "small");
  await receiver.close();
  await sender.close();
});
