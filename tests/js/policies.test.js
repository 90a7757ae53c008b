// Shared-access policies (`--policies`) through the official JavaScript SDK: a Send-only key
// sends and cannot receive; a Listen-only key (either of its keys) receives, settles and cannot
// send (the link's `amqp:unauthorized-access` raised as the SDK's UnauthorizedAccess error); a
// wrong key is refused at `$cbs` the same way; the admin client refuses a key without Manage
// with its UnauthorizedRequestError (the explorer's API with 401), and creates a queue with an
// `authorizationRules` rule whose key, read back, then works over AMQP on that queue only (a
// topic's rule on its subscriptions and their dead-letter queues too); a SIGHUP re-read rotates a primary key and removes a rule at once (the secondary key working
// on); and the emulator key is refused at start-up off loopback.
"use strict";

const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { ServiceBusClient } = require("@azure/service-bus");
const { spawnSync } = require("node:child_process");
const { ServiceBusAdministrationClient } = require("service-bus-beta");
const { connectionStringAs, startBroker } = require("./broker");

const key = () => crypto.randomBytes(32).toString("base64");
const KEYS = { root: key(), sender: key(), listener: key(), listener2: key() };
const QUEUE = "js-policies";

let broker;
let policiesDir;

/** The policies file: root (Manage), listener (Listen, with a secondary) and, if given, sender. */
function writePolicies(file, keys) {
  const rules = [
    { KeyName: "root", PrimaryKey: keys.root, Rights: ["Manage", "Send", "Listen"] },
    {
      KeyName: "listener", PrimaryKey: keys.listener, SecondaryKey: keys.listener2,
      Rights: ["Listen"],
    },
  ];
  if (keys.sender) rules.push({ KeyName: "sender", PrimaryKey: keys.sender, Rights: ["Send"] });
  fs.writeFileSync(file, JSON.stringify({ SharedAccessPolicies: rules }));
}

before(async () => {
  policiesDir = fs.mkdtempSync(path.join(os.tmpdir(), "busbar-js-policies-"));
  const policies = path.join(policiesDir, "policies.json");
  writePolicies(policies, KEYS);
  broker = await startBroker({ queues: { [QUEUE]: {} }, args: ["--policies", policies] });
});

after(async () => {
  await broker.stop();
  fs.rmSync(policiesDir, { recursive: true, force: true });
});

/** A client that gives up at the first refusal (UnauthorizedAccess is retryable in JS). */
function clientAs(keyName, secret) {
  return new ServiceBusClient(connectionStringAs(broker.address, keyName, secret), {
    retryOptions: { maxRetries: 0 },
  });
}

/** A validator for assert.rejects: the SDK's UnauthorizedAccess error, with `text` in it. */
function unauthorized(text) {
  return (error) => {
    assert.equal(error.code, "UnauthorizedAccess", `${error}`);
    assert.ok(error.message.includes(text), error.message);
    return true;
  };
}

test("a Listen-only key cannot send and a wrong key is refused", async () => {
  const listener = clientAs("listener", KEYS.listener);
  await assert.rejects(
    listener.createSender(QUEUE).sendMessages({ body: "no" }),
    unauthorized("'Send' claim(s) are required"),
  );
  await listener.close();
  const wrong = clientAs("root", KEYS.listener);
  await assert.rejects(wrong.createSender(QUEUE).sendMessages({ body: "no" }), unauthorized(""));
  await wrong.close();
  const root = clientAs("root", KEYS.root);
  await root.createSender(QUEUE).sendMessages({ body: "yes" });
  await root.close();
});

test("the admin client refuses a key without Manage", async () => {
  const admin = new ServiceBusAdministrationClient(
    connectionStringAs(broker.adminAddress, "listener", KEYS.listener));
  await assert.rejects(admin.getQueue(QUEUE), (error) => {
    assert.equal(error.statusCode, 401, `${error}`);
    assert.equal(error.code, "UnauthorizedRequestError", `${error}`);
    return true;
  });
  const root = new ServiceBusAdministrationClient(
    connectionStringAs(broker.adminAddress, "root", KEYS.root));
  assert.equal((await root.getQueue(QUEUE)).name, QUEUE);
  // The explorer's JSON API likewise needs Manage.
  const explorer = `http://127.0.0.1:${broker.adminPort}/$busbar/api/namespace`;
  assert.equal(await explorerStatus(explorer, "listener", KEYS.listener), 401);
  assert.equal(await explorerStatus(explorer, "root", KEYS.root), 200);
});

/** The status of a GET of `address` with a SAS token of `keyName`'s `secret`. */
async function explorerStatus(address, keyName, secret) {
  const expiry = Math.floor(Date.now() / 1000) + 3600;
  const audience = encodeURIComponent(address);
  const signature = crypto.createHmac("sha256", secret).update(`${audience}\n${expiry}`).digest("base64");
  const token = `SharedAccessSignature sr=${audience}&sig=${encodeURIComponent(signature)}` +
    `&se=${expiry}&skn=${keyName}`;
  const response = await fetch(address, { headers: { Authorization: token } });
  await response.arrayBuffer();
  return response.status;
}

test("a Send-only key sends and cannot receive", async () => {
  const sender = clientAs("sender", KEYS.sender);
  await sender.createSender(QUEUE).sendMessages({ body: "from the sender" });
  await assert.rejects(
    sender.createReceiver(QUEUE).receiveMessages(1, { maxWaitTimeInMs: 2000 }),
    unauthorized("'Listen' claim(s) are required"),
  );
  await sender.close();
});

test("a Listen-only key receives, settles and cannot send, with either of its keys", async () => {
  const root = clientAs("root", KEYS.root);
  await root.createSender(QUEUE).sendMessages({ body: "for the listener" });
  await root.close();
  for (const secret of [KEYS.listener, KEYS.listener2]) {
    const listener = clientAs("listener", secret);
    await assert.rejects(
      listener.createSender(QUEUE).sendMessages({ body: "no" }),
      unauthorized("'Send' claim(s) are required"),
    );
    await listener.close();
  }
  const listener = clientAs("listener", KEYS.listener2);
  const receiver = listener.createReceiver(QUEUE);
  const received = [];
  while (received.length === 0) {
    received.push(...await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 }));
  }
  await receiver.completeMessage(received[0]);
  await listener.close();
});

test("the admin client makes an entity rule whose key works on its queue only", async () => {
  const admin = new ServiceBusAdministrationClient(
    connectionStringAs(broker.adminAddress, "root", KEYS.root));
  const secret = key();
  await admin.createQueue("js-entity-rule", {
    authorizationRules: [{
      claimType: "SharedAccessKey", keyName: "js-app", primaryKey: secret,
      accessRights: ["Send", "Listen"],
    }],
  });
  const [rule] = (await admin.getQueue("js-entity-rule")).authorizationRules;
  assert.equal(rule.keyName, "js-app");
  assert.equal(rule.primaryKey, secret);
  assert.deepEqual([...rule.accessRights].sort(), ["Listen", "Send"]);

  const own = new ServiceBusClient(
    connectionStringAs(broker.address, "js-app", secret) + "EntityPath=js-entity-rule;",
    { retryOptions: { maxRetries: 0 } });
  await own.createSender("js-entity-rule").sendMessages({ body: "entity key" });
  const receiver = own.createReceiver("js-entity-rule");
  const received = [];
  while (received.length === 0) {
    received.push(...await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 }));
  }
  await receiver.completeMessage(received[0]);
  await own.close();
  const elsewhere = clientAs("js-app", secret);
  await assert.rejects(elsewhere.createSender(QUEUE).sendMessages({ body: "no" }), unauthorized(""));
  await elsewhere.close();
});

/** The first message `receiver` gets, waiting as long as it takes. */
async function receiveOne(receiver) {
  const received = [];
  while (received.length === 0) {
    received.push(...await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 }));
  }
  return received[0];
}

test("a topic's entity rule covers its subscriptions and their dead-letter queues", async () => {
  const admin = new ServiceBusAdministrationClient(
    connectionStringAs(broker.adminAddress, "root", KEYS.root));
  const secret = key();
  await admin.createTopic("js-topic-rule", {
    authorizationRules: [{
      claimType: "SharedAccessKey", keyName: "js-billing", primaryKey: secret,
      accessRights: ["Send", "Listen"],
    }],
  });
  await admin.createSubscription("js-topic-rule", "audit");

  const own = new ServiceBusClient(
    connectionStringAs(broker.address, "js-billing", secret) + "EntityPath=js-topic-rule;",
    { retryOptions: { maxRetries: 0 } });
  await own.createSender("js-topic-rule").sendMessages({ body: "for audit" });
  const receiver = own.createReceiver("js-topic-rule", "audit");
  await receiver.deadLetterMessage(await receiveOne(receiver), { deadLetterReason: "checked" });
  const deadLetters = own.createReceiver("js-topic-rule", "audit", { subQueueType: "deadLetter" });
  const dead = await receiveOne(deadLetters);
  assert.equal(dead.body, "for audit");
  assert.equal(dead.deadLetterReason, "checked");
  await deadLetters.completeMessage(dead);
  await own.close();
  const elsewhere = clientAs("js-billing", secret);
  await assert.rejects(elsewhere.createSender(QUEUE).sendMessages({ body: "no" }), unauthorized(""));
  await elsewhere.close();
});

// Last: it changes the broker's keys.
test("a re-read on SIGHUP rotates a primary key and removes a rule, the secondary key working on", async () => {
  const rotated = { ...KEYS, listener: key(), sender: undefined };
  writePolicies(path.join(policiesDir, "policies.json"), rotated);
  await broker.hangUp();
  for (const [name, secret] of [["sender", KEYS.sender], ["listener", KEYS.listener]]) {
    const refused = clientAs(name, secret);
    await assert.rejects(
      refused.createReceiver(QUEUE).peekMessages(1), unauthorized(""), `${name}'s old key`);
    await refused.close();
  }
  for (const secret of [KEYS.listener2, rotated.listener]) {
    const listener = clientAs("listener", secret);
    await listener.createReceiver(QUEUE).peekMessages(1);
    await listener.close();
  }
});

test("the emulator key is refused at start-up off loopback", () => {
  const started = spawnSync(process.env.BUSBAR_BIN, [
    "--memory", "--listen", "0.0.0.0:0", "--tls-listen", "none", "--admin-listen", "none",
  ], { encoding: "utf8", timeout: 30_000 });
  assert.equal(started.status, 2, started.stderr);
  assert.ok(started.stderr.includes("--policies"), started.stderr);
});
