// Starts the real `busbar` binary for the JavaScript SDK tests: a fresh data directory, a
// Config.json in the emulator's format with the entities a test file asks for,
// `--listen`, `--tls-listen` and `--admin-listen` on 127.0.0.1:0; the ports come from the broker's
// `listening on ADDR:PORT` and `admin listening on ADDR:PORT` lines.
"use strict";

const { spawn } = require("node:child_process");
const { before, after } = require("node:test");
const { ServiceBusClient } = require("@azure/service-bus");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const START_TIMEOUT_MS = 30_000;
/** How long a test waits for messages it expects. */
const WAIT = { maxWaitTimeInMs: 5_000 };
const STOP_TIMEOUT_MS = 20_000;

/**
 * A Config.json for `queues` ({ name: properties }) and `topics`
 * ({ name: { subscriptionName: { ...properties, Rules } } }); properties a test does not set keep
 * the emulator's defaults (§9.4 of the wire reference).
 */
function emulatorConfig(queues, topics) {
  const queueList = Object.entries(queues).map(([name, properties]) => ({
    Name: name,
    Properties: properties,
  }));
  const topicList = Object.entries(topics).map(([name, subscriptions]) => ({
    Name: name,
    Properties: {},
    Subscriptions: Object.entries(subscriptions).map(([subscription, { Rules = [], ...properties }]) => ({
      Name: subscription,
      Properties: properties,
      Rules,
    })),
  }));
  return {
    UserConfig: {
      Namespaces: [{ Name: "sbemulatorns", Queues: queueList, Topics: topicList }],
      Logging: { Type: "Console" },
    },
  };
}

/** A connection string for `endpoint` (host:port) signed with the rule `keyName`'s `key`. */
function connectionStringAs(endpoint, keyName, key) {
  return `Endpoint=sb://${endpoint};SharedAccessKeyName=${keyName};` +
    `SharedAccessKey=${key};UseDevelopmentEmulator=true;`;
}

/**
 * A running broker (with `args` added to its command line): `connectionString` for the SDK, `adminConnectionString` (the same with the
 * admin port, as the emulator documents for the administration client), `adminPort`, `amqpsPort`,
 * `adminCaFile` (the CA to trust for https on that port), `address` and `adminAddress` (host:port),
 * `stop()` to end it (asserts exit 0), and `hangUp()` to make it re-read its policies file.
 */
async function startBroker({ queues = {}, topics = {}, args = [] } = {}) {
  const binary = process.env.BUSBAR_BIN;
  if (!binary) {
    throw new Error("BUSBAR_BIN must name the busbar binary (tests/js_sdk.rs sets it)");
  }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "busbar-js-"));
  const configFile = path.join(directory, "Config.json");
  fs.writeFileSync(configFile, JSON.stringify(emulatorConfig(queues, topics), null, 2));
  // tests/js_sdk.rs makes one certificate for the suite, whose CA Node trusts from its start
  // (NODE_EXTRA_CA_CERTS); without it, the broker's own development CA.
  const tlsDir = process.env.BUSBAR_TLS_DIR;
  const tlsFiles = tlsDir
    ? ["--tls-cert", path.join(tlsDir, "server.crt"), "--tls-key", path.join(tlsDir, "server.key")]
    : [];
  const child = spawn(
    binary,
    ["--config", configFile, "--data-dir", path.join(directory, "data"), "--listen", "127.0.0.1:0",
     "--tls-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", ...tlsFiles, ...args],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const { address, amqpsAddress, adminAddress } = await listeningAddresses(child);
  const adminPort = Number(adminAddress.split(":").pop());
  const amqpsPort = Number(amqpsAddress.split(":").pop());
  const connectionStringFor = (endpoint) =>
    connectionStringAs(endpoint, "RootManageSharedAccessKey", "SAS_KEY_VALUE");
  return {
    address,
    adminAddress: `localhost:${adminPort}`,
    connectionString: connectionStringFor(address),
    adminConnectionString: connectionStringFor(`localhost:${adminPort}`),
    adminPort,
    amqpsPort,
    // The CA of the broker's TLS certificate: the suite's, or the one it made in its data dir.
    adminCaFile: tlsDir ? path.join(tlsDir, "ca.crt") : path.join(directory, "data", "tls", "ca.crt"),
    stop: () => stopBroker(child, directory),
    // SIGHUP (re-reading --policies); resolves at the broker's "policies re-read" line.
    hangUp: () => new Promise((resolve) => {
      const lines = readline.createInterface({ input: child.stdout });
      lines.on("line", (line) => {
        if (line.startsWith("policies re-read")) resolve();
      });
      child.kill("SIGHUP");
    }),
  };
}

/** The AMQP, AMQPS and admin addresses from the `listening on` lines. */
function listeningAddresses(child) {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(
        `busbar did not print "listening on" and "admin listening on" within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    const found = {};
    lines.on("line", (line) => {
      const amqp = /^listening on (\S+)/.exec(line);
      const amqps = /^amqps listening on (\S+)/.exec(line);
      const admin = /^admin listening on (\S+)/.exec(line);
      if (amqp) found.address = amqp[1];
      if (amqps) found.amqpsAddress = amqps[1];
      if (admin) found.adminAddress = admin[1];
      if (found.address && found.amqpsAddress && found.adminAddress) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`busbar exited with ${code} before listening`));
    });
  });
}

function stopBroker(child, directory) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`busbar did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`));
    }, STOP_TIMEOUT_MS);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(directory, { recursive: true, force: true });
      if (code === 0) {
        resolve();
      } else {
        reject(new Error(`busbar exited with code ${code}, signal ${signal}`));
      }
    });
    child.kill("SIGTERM");
  });
}

/**
 * Starts a broker with `entities` (as for `startBroker`) and a connected `ServiceBusClient`
 * before the file's tests, and stops both after them: `bus.client` is the client.
 */
function brokerForThisFile(entities) {
  const bus = { client: undefined, broker: undefined };
  before(async () => {
    bus.broker = await startBroker(entities);
    bus.client = new ServiceBusClient(bus.broker.connectionString);
  });
  after(async () => {
    await bus.client.close();
    await bus.broker.stop();
  });
  return bus;
}

module.exports = { brokerForThisFile, connectionStringAs, startBroker, WAIT };
