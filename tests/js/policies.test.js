// Shared-access policies (`--policies`) through the official JavaScript SDK: a Listen-only key
// cannot send (the link's `amqp:unauthorized-access` raised as the SDK's UnauthorizedAccess
// error), a wrong key is refused at `$cbs` the same way, and the admin client refuses a key
// without Manage with its UnauthorizedRequestError.
"use strict";

const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { ServiceBusClient } = require("@azure/service-bus");
const { ServiceBusAdministrationClient } = require("service-bus-beta");
const { connectionStringAs, startBroker } = require("./broker");

const key = () => crypto.randomBytes(32).toString("base64");
const KEYS = { root: key(), listener: key() };
const QUEUE = "js-policies";

let broker;
let policiesDir;

before(async () => {
  policiesDir = fs.mkdtempSync(path.join(os.tmpdir(), "busbar-js-policies-"));
  const policies = path.join(policiesDir, "policies.json");
  fs.writeFileSync(policies, JSON.stringify({
    SharedAccessPolicies: [
      { KeyName: "root", PrimaryKey: KEYS.root, Rights: ["Manage", "Send", "Listen"] },
      { KeyName: "listener", PrimaryKey: KEYS.listener, Rights: ["Listen"] },
    ],
  }));
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
});
