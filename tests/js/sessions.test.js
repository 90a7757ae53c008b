// Sessions through the official JavaScript SDK: a named session and the next available one,
// per-session FIFO, session state, the exclusive session lock, and request-response through
// reply-to-session-id.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { brokerForThisFile, WAIT } = require("./broker");

const QUEUES = {
  named: { RequiresSession: true },
  next: { RequiresSession: true },
  state: { RequiresSession: true },
  exclusive: { RequiresSession: true },
  requests: { RequiresSession: true },
  replies: { RequiresSession: true },
};

const bus = brokerForThisFile({ queues: QUEUES });

test("a named session delivers only its own messages, in order", async () => {
  const sender = bus.client.createSender("named");
  await sender.sendMessages([
    { body: "a1", sessionId: "a" },
    { body: "b1", sessionId: "b" },
    { body: "a2", sessionId: "a" },
    { body: "a3", sessionId: "a" },
  ]);
  const receiver = await bus.client.acceptSession("named", "a");
  assert.equal(receiver.sessionId, "a");
  const messages = await receiver.receiveMessages(3, WAIT);
  assert.deepEqual(messages.map((message) => message.body), ["a1", "a2", "a3"]);
  for (const message of messages) {
    assert.equal(message.sessionId, "a");
    await receiver.completeMessage(message);
  }
  assert.ok(receiver.sessionLockedUntilUtc > new Date());
  await receiver.close();
  await sender.close();
});

test("the next available session is accepted, and each session goes to one receiver", async () => {
  const sender = bus.client.createSender("next");
  await sender.sendMessages([
    { body: "x", sessionId: "s1" },
    { body: "y", sessionId: "s2" },
  ]);
  const first = await bus.client.acceptNextSession("next");
  const second = await bus.client.acceptNextSession("next");
  assert.deepEqual([first.sessionId, second.sessionId].sort(), ["s1", "s2"]);
  const [fromFirst] = await first.receiveMessages(1, WAIT);
  const [fromSecond] = await second.receiveMessages(1, WAIT);
  assert.equal(fromFirst.sessionId, first.sessionId);
  assert.equal(fromSecond.sessionId, second.sessionId);
  await first.completeMessage(fromFirst);
  await second.completeMessage(fromSecond);
  await first.close();
  await second.close();
  await sender.close();
});

test("session state is set, read back and cleared, and outlives the session's messages", async () => {
  const sender = bus.client.createSender("state");
  await sender.sendMessages({ body: "step 1", sessionId: "order-7" });
  const receiver = await bus.client.acceptSession("state", "order-7");
  assert.equal(await receiver.getSessionState(), null);
  await receiver.setSessionState("checkpoint-1");
  const [message] = await receiver.receiveMessages(1, WAIT);
  await receiver.completeMessage(message);
  await receiver.close();

  const again = await bus.client.acceptSession("state", "order-7");
  assert.equal(Buffer.from(await again.getSessionState()).toString(), "checkpoint-1");
  const renewed = await again.renewSessionLock();
  assert.ok(renewed > new Date());
  await again.setSessionState(null);
  assert.equal(await again.getSessionState(), null);
  await again.close();
  await sender.close();
});

test("a session held by one receiver cannot be accepted by another", async () => {
  const sender = bus.client.createSender("exclusive");
  await sender.sendMessages({ body: "mine", sessionId: "locked" });
  const owner = await bus.client.acceptSession("exclusive", "locked");
  await assert.rejects(bus.client.acceptSession("exclusive", "locked"), (error) => {
    assert.equal(error.code, "SessionCannotBeLocked");
    return true;
  });
  const [message] = await owner.receiveMessages(1, WAIT);
  assert.equal(message.body, "mine");
  await owner.completeMessage(message);
  await owner.close();
  await sender.close();
});

test("request-response: the reply goes to the requester's session", async () => {
  const requests = bus.client.createSender("requests");
  const replies = bus.client.createSender("replies");
  await requests.sendMessages({ body: 20, sessionId: "work", replyToSessionId: "caller-1" });

  const server = await bus.client.acceptSession("requests", "work");
  const [request] = await server.receiveMessages(1, WAIT);
  assert.equal(request.replyToSessionId, "caller-1");
  await replies.sendMessages({ body: request.body * 2, sessionId: request.replyToSessionId });
  await server.completeMessage(request);

  const caller = await bus.client.acceptSession("replies", "caller-1");
  const [reply] = await caller.receiveMessages(1, WAIT);
  assert.equal(reply.body, 40);
  await caller.completeMessage(reply);
  await server.close();
  await caller.close();
  await requests.close();
  await replies.close();
});
