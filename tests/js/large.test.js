// Premium's large messages through the official JavaScript SDK: a queue created through the
// administration client with MaxMessageSizeInKilobytes 102400 takes a 50 MB message, which
// comes back whole; a queue configured with 1024 refuses one past its limit.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const { ServiceBusAdministrationClient } = require("service-bus-beta");
const { isServiceBusError } = require("@azure/service-bus");
const { brokerForThisFile, WAIT } = require("./broker");

const MB = 1024 * 1024;
const bus = brokerForThisFile({ queues: { "large-configured": { MaxMessageSizeInKilobytes: 1024 } } });

test("a 50 MB message crosses a queue created with Premium's largest limit", async () => {
  const admin = new ServiceBusAdministrationClient(bus.broker.adminConnectionString);
  await admin.createQueue("js-large", { maxMessageSizeInKilobytes: 102400 });
  assert.equal((await admin.getQueue("js-large")).maxMessageSizeInKilobytes, 102400);
  assert.equal((await admin.getQueue("large-configured")).maxMessageSizeInKilobytes, 1024);

  const body = crypto.randomBytes(50 * MB);
  const sender = bus.client.createSender("js-large");
  await sender.sendMessages({ body, messageId: "large" });
  const receiver = bus.client.createReceiver("js-large");
  const [message] = await receiver.receiveMessages(1, { maxWaitTimeInMs: 60_000 });
  assert.equal(message.messageId, "large");
  assert.ok(body.equals(message.body), "the body came back changed");
  await receiver.completeMessage(message);
  assert.deepEqual(await receiver.receiveMessages(1, { maxWaitTimeInMs: 1_000 }), []);
  await receiver.close();
  await sender.close();
});

test("a message past its queue's limit is refused as MessageSizeExceeded", async () => {
  const sender = bus.client.createSender("large-configured");
  await assert.rejects(sender.sendMessages({ body: crypto.randomBytes(MB + 64 * 1024) }), (error) => {
    assert.ok(isServiceBusError(error), `not a ServiceBusError: ${error}`);
    assert.equal(error.code, "MessageSizeExceeded");
    return true;
  });
  const within = crypto.randomBytes(MB - 64 * 1024);
  await sender.sendMessages({ body: within });
  const receiver = bus.client.createReceiver("large-configured", { receiveMode: "receiveAndDelete" });
  const [message] = await receiver.receiveMessages(1, WAIT);
  assert.ok(within.equals(message.body), "the body came back changed");
  await receiver.close();
  await sender.close();
});
