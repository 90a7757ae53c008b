// Busbar for Node.js test suites: `startBusbar()` runs the broker this package carries on free
// loopback ports in a temporary directory, ready once it has printed its listening lines (no
// sleeping), and `useBusbar()` gives a test file one broker, reset before each test, with its
// log attached to a failing test's report.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");
const { Controls, KEY, KEY_NAME } = require("./controls");

const START_TIMEOUT_MS = 30_000;
// SIGTERM's grace before SIGKILL: an idle broker exits in milliseconds, one whose clients left
// connections open waits seconds for their close; its data is thrown away regardless.
const STOP_GRACE_MS = 500;

/** The binary: `BUSBAR_BIN` if set, else the one this package carries for this machine. */
function binaryPath() {
  if (process.env.BUSBAR_BIN) return process.env.BUSBAR_BIN;
  const name = process.platform === "win32" ? "busbar.exe" : "busbar";
  const carried = path.join(__dirname, "vendor", `${process.platform}-${process.arch}`, name);
  if (!fs.existsSync(carried)) {
    throw new Error(`this busbar package carries no binary for ${process.platform}-${process.arch}`);
  }
  return carried;
}

const READY = {
  port: /^listening on .*:(\d+)$/,
  amqpsPort: /^amqps listening on .*:(\d+)$/,
  adminPort: /^admin listening on .*:(\d+)$/,
  caFile: /^tls ca: (.+)$/,
};

/** A running broker: connection strings, admin endpoint, controls, log and stop. */
class Broker {
  constructor(child, directory, logFile, found) {
    this.child = child;
    this.directory = directory;
    this.logFile = logFile;
    this.port = Number(found.port);
    this.amqpsPort = Number(found.amqpsPort);
    this.adminPort = Number(found.adminPort);
    this.caFile = found.caFile;
    this.controls = new Controls(this.adminEndpoint);
  }

  get connectionString() {
    return `Endpoint=sb://localhost:${this.port};SharedAccessKeyName=${KEY_NAME};` +
      `SharedAccessKey=${KEY};UseDevelopmentEmulator=true;`;
  }

  /** The service's form, for AMQPS with `amqpsEndpoint` as `customEndpointAddress` (trust `caFile`). */
  get productionConnectionString() {
    return `Endpoint=sb://localhost/;SharedAccessKeyName=${KEY_NAME};SharedAccessKey=${KEY}`;
  }

  get amqpsEndpoint() {
    return `https://localhost:${this.amqpsPort}`;
  }

  get adminEndpoint() {
    return `http://127.0.0.1:${this.adminPort}`;
  }

  get adminConnectionString() {
    return `Endpoint=sb://localhost:${this.adminPort};SharedAccessKeyName=${KEY_NAME};` +
      `SharedAccessKey=${KEY};UseDevelopmentEmulator=true;`;
  }

  createQueue(name, properties) {
    return this.controls.putEntity(name, "QueueDescription", properties);
  }

  createTopic(name, properties) {
    return this.controls.putEntity(name, "TopicDescription", properties);
  }

  createSubscription(topic, name, properties) {
    return this.controls.putEntity(`${topic}/Subscriptions/${name}`, "SubscriptionDescription", properties);
  }

  purge(entity, { deadLetter = false } = {}) {
    return this.controls.purge(entity, deadLetter);
  }

  reset() {
    return this.controls.reset();
  }

  advanceClock(by) {
    return this.controls.advanceClock(typeof by === "number" ? `${by}ms` : by);
  }

  fault(entity, kind, { count = 1, condition, delayMs } = {}) {
    const document = { kind };
    if (["server-busy", "lock-lost", "delay"].includes(kind)) document.count = count;
    if (condition !== undefined) document.condition = condition;
    if (delayMs !== undefined) document.millis = delayMs;
    return this.controls.fault(entity, document);
  }

  log() {
    try {
      return fs.readFileSync(this.logFile, "utf8");
    } catch {
      return "";
    }
  }

  stop() {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        fs.rmSync(this.directory, { recursive: true, force: true });
        resolve();
      };
      if (this.child.exitCode !== null || this.child.signalCode !== null) return finish();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), STOP_GRACE_MS);
      this.child.once("exit", finish);
      this.child.kill("SIGTERM");
    });
  }
}

/** Every broker still running, killed if the test process exits without stopping them. */
const running = new Set();
process.on("exit", () => running.forEach((child) => child.kill("SIGKILL")));

/**
 * Starts a broker. `storage`: "memory" (default) or "file"; `config`: the emulator's
 * Config.json as an object, or a path to one; `args`: more command-line arguments.
 */
async function startBusbar({ storage = "memory", config, args = [] } = {}) {
  if (!["memory", "file"].includes(storage)) throw new Error(`storage is memory or file, not ${storage}`);
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "busbar-"));
  const logFile = path.join(directory, "busbar.log");
  const argv = ["--test-controls", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
    "--admin-listen", "127.0.0.1:0", ...(storage === "memory" ? ["--memory"] : ["--data-dir", "data"])];
  if (config !== undefined) {
    const file = typeof config === "string" ? path.resolve(config) : path.join(directory, "Config.json");
    if (typeof config !== "string") fs.writeFileSync(file, JSON.stringify(config));
    argv.push("--config", file);
  }
  const log = fs.openSync(logFile, "a");
  const child = spawn(binaryPath(), [...argv, ...args], {
    cwd: directory,
    stdio: ["ignore", "pipe", log],
    env: { RUST_LOG: "info", ...process.env },
  });
  fs.closeSync(log);
  running.add(child);
  child.once("exit", () => running.delete(child));
  const found = await readiness(child, logFile);
  return new Broker(child, directory, logFile, found);
}

/** The values of the start-up lines, once all are printed; stdout is copied to the log. */
function readiness(child, logFile) {
  return new Promise((resolve, reject) => {
    const found = {};
    const fail = (why) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`busbar did not start: ${why}\n${fs.readFileSync(logFile, "utf8")}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const onExit = (code) => fail(`it exited (${code})`);
    child.once("exit", onExit);
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      fs.appendFileSync(logFile, `${line}\n`);
      for (const [name, pattern] of Object.entries(READY)) {
        const match = pattern.exec(line);
        if (match && found[name] === undefined) found[name] = match[1];
      }
      if (Object.keys(READY).every((name) => found[name] !== undefined) && !found.ready) {
        found.ready = true;
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve(found);
      }
    });
  });
}

/**
 * One broker for the test file (Node runs each file in a process of its own): started before
 * its tests, reset before each, its log attached to a failed test's diagnostics, stopped after.
 * `hooks` defaults to `node:test`'s; with Jest pass `{ before: beforeAll, after: afterAll, beforeEach, afterEach }`.
 */
function useBusbar(options = {}, hooks = require("node:test")) {
  const handle = { broker: undefined };
  hooks.before(async () => {
    handle.broker = await startBusbar(options);
  });
  hooks.beforeEach(() => handle.broker.reset());
  hooks.afterEach((t) => {
    if (t && t.passed === false && typeof t.diagnostic === "function") {
      t.diagnostic(`busbar log:\n${handle.broker.log()}`);
    }
  });
  hooks.after(() => handle.broker && handle.broker.stop());
  return new Proxy(handle, {
    get(target, name) {
      if (!target.broker) throw new Error("the broker starts in the before hook: use it in tests");
      const value = target.broker[name];
      return typeof value === "function" ? value.bind(target.broker) : value;
    },
  });
}

module.exports = { Broker, binaryPath, startBusbar, useBusbar };
