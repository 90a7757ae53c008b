// The web explorer in a real browser: Playwright (playwright-core) drives Debian's Chromium
// headless against the busbar binary while the official Python SDK sends and dead-letters.
// Every wait is a poll with a deadline (waitForFunction / waitForSelector), never a sleep.
"use strict";

const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");
const { chromium } = require("playwright-core");

const WAIT_MS = 15_000;
const SDK_ACTIONS = path.join(__dirname, "sdk_actions.py");
const SCREENSHOTS = process.env.BUSBAR_SCREENSHOTS;

let broker;
let browser;
let page;

/** Starts busbar with a queue `orders`, a session queue `carts` and a topic `events`. */
async function startBroker() {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "busbar-browser-"));
  const configFile = path.join(directory, "Config.json");
  const config = {
    UserConfig: {
      Namespaces: [{
        Name: "sbemulatorns",
        Queues: [
          { Name: "orders", Properties: { MaxDeliveryCount: 5 } },
          { Name: "carts", Properties: { RequiresSession: true } },
        ],
        Topics: [{
          Name: "events",
          Properties: {},
          Subscriptions: [{
            Name: "audit",
            Properties: {},
            Rules: [{ Name: "eu-only", Properties: { FilterType: "Sql", SqlFilter: { SqlExpression: "region = 'eu'" } } }],
          }],
        }],
      }],
      Logging: { Type: "Console" },
    },
  };
  fs.writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(
    process.env.BUSBAR_BIN,
    ["--config", configFile, "--memory", "--listen", "127.0.0.1:0", "--tls-listen", "none",
     "--admin-listen", "127.0.0.1:0"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = readline.createInterface({ input: child.stdout });
  const found = {};
  await new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`busbar exited early (${code})`)));
    lines.on("line", (line) => {
      const admin = /^admin listening on (\S+)/.exec(line);
      const amqp = /^listening on (\S+)/.exec(line);
      if (admin) { found.admin = admin[1]; }
      if (amqp) { found.amqp = amqp[1]; }
      if (found.admin && found.amqp) { resolve(); }
    });
  });
  lines.on("line", () => {});
  return {
    child,
    directory,
    url: `http://${found.admin}`,
    connectionString: `Endpoint=sb://${found.amqp};SharedAccessKeyName=RootManageSharedAccessKey;` +
      "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
  };
}

/** Runs one action of the Python SDK helper. */
function python(...args) {
  return execFileSync(process.env.BUSBAR_PYTHON, [SDK_ACTIONS, broker.connectionString, ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** Waits until the element `selector` shows `text`. */
async function waitForText(selector, text) {
  await page.waitForFunction(
    ([selector, text]) => document.querySelector(selector)?.textContent.trim() === text,
    [selector, text],
    { timeout: WAIT_MS },
  );
}

/** Saves the page as docs/screenshots/NAME.png (with BUSBAR_SCREENSHOTS), `selector` at the top. */
async function screenshot(name, selector) {
  if (SCREENSHOTS) {
    if (selector) {
      await page.locator(selector).first().evaluate((element) => element.scrollIntoView());
    }
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }
}

const count = (entity, field) => `[data-count="${entity}|${field}"]`;

before(async () => {
  broker = await startBroker();
  browser = await chromium.launch({ executablePath: process.env.BUSBAR_CHROMIUM, headless: true });
  page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
});

after(async () => {
  await browser?.close();
  broker?.child.kill("SIGTERM");
  fs.rmSync(broker.directory, { recursive: true, force: true });
});

test("signing in with a wrong key fails, with the connection string works", async () => {
  await page.goto(`${broker.url}/explorer`);
  assert.match(page.url(), /\/explorer\/sign-in$/);
  await page.fill("input[name=key]", "not-the-key");
  await page.click("button[type=submit]");
  await page.waitForSelector("p.error");
  await page.fill("input[name=connection_string]", broker.connectionString);
  await page.click("form.card button[type=submit]");
  await page.waitForSelector("table#entities");
  const cookies = await page.context().cookies();
  const session = cookies.find((cookie) => cookie.name === "busbar_explorer");
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Strict");
});

test("the overview's counts follow what the Python SDK sends", async () => {
  await page.goto(`${broker.url}/explorer`);
  await waitForText(count("orders", "active"), "0");
  python("send", "orders", "3");
  await waitForText(count("orders", "active"), "3");
  await screenshot("overview");
});

test("an entity page peeks its messages and opens one", async () => {
  await page.click("a:text-is('orders')");
  await page.waitForSelector("table#messages tbody tr");
  assert.equal(await page.locator("table#messages tbody tr").count(), 3);
  await screenshot("entity");
  await page.click("table#messages tbody tr:first-child td.n a");
  await waitForText("#body-text", '{"order": 0}');
  const json = await page.textContent("#body-json");
  assert.match(json, /"order": 0/);
  assert.match(await page.textContent("#application-properties"), /origin\s*python/);
  assert.match(await page.textContent("#system-properties"), /application\/json/);
  await screenshot("message");
});

test("a message sent from the explorer arrives", async () => {
  await page.goto(`${broker.url}/explorer/entity?path=orders`);
  await page.fill("#send textarea[name=body]", "hello from the browser");
  await page.fill("#send textarea[name=properties]", "priority=high");
  await page.fill("#send input[name=message_id]", "browser-1");
  await page.click("#send button[type=submit]");
  await waitForText("p.notice", "Message sent.");
  await waitForText(count("orders", "active"), "4");
  assert.match(await page.textContent("table#messages"), /hello from the browser/);
});

test("dead-lettered messages are shown with their reason and re-driven", async () => {
  python("dead-letter", "orders", "2");
  await page.goto(`${broker.url}/explorer/entity?path=orders&queue=dead-letter`);
  await waitForText(count("orders", "deadLetter"), "2");
  assert.equal(await page.locator("table#messages tbody tr").count(), 2);
  assert.match(await page.textContent("table#messages"), /bad-order/);
  await screenshot("dead-letter");
  await page.click("table#messages tbody tr:first-child td.n a");
  await waitForText("#dead-letter-reason", "bad-order");
  await page.goBack();
  await page.check("table#messages tbody tr:first-child input[type=checkbox]");
  await page.click("button[value=selected]");
  await waitForText("p.notice", "Re-drove 1 messages; 0 stayed in the dead-letter queue.");
  await waitForText(count("orders", "deadLetter"), "1");
  await waitForText(count("orders", "active"), "3");
  await page.click("button[value=all]");
  await waitForText("p.notice", "Re-drove 1 messages; 0 stayed in the dead-letter queue.");
  await waitForText(count("orders", "deadLetter"), "0");
  await waitForText(count("orders", "active"), "4");
});

test("purging empties the entity", async () => {
  await page.goto(`${broker.url}/explorer/entity?path=orders`);
  await page.click("form[action='/explorer/purge']:has(input[value=false]) button");
  await waitForText("p.notice", "Purged 4 messages.");
  await waitForText(count("orders", "active"), "0");
});

test("a session's state is shown, edited and cleared", async () => {
  python("send", "carts", "1", "cart-7");
  await page.goto(`${broker.url}/explorer/entity?path=carts`);
  const session = "form.session[data-session='cart-7']";
  await page.waitForSelector(session);
  await page.fill(`${session} textarea[name=state]`, "step=2");
  await page.click(`${session} button[value=save]`);
  await waitForText("p.notice", "Saved the state of session cart-7.");
  assert.equal(await page.inputValue(`${session} textarea[name=state]`), "step=2");
  assert.equal(python("state", "carts", "cart-7").trim(), "step=2");
  await screenshot("sessions", "h2:text-is('Sessions')");
  await page.click(`${session} button[value=clear]`);
  await waitForText("p.notice", "Cleared the state of session cart-7.");
  assert.equal(python("state", "carts", "cart-7").trim(), "");
});

test("a subscription shows its rules; a forged form is refused", async () => {
  await page.goto(`${broker.url}/explorer/entity?path=events/Subscriptions/audit`);
  assert.match(await page.textContent("table#rules"), /eu-only/);
  const forged = await page.request.post(`${broker.url}/explorer/purge`, {
    form: { csrf: "0".repeat(64), path: "orders", dead_letter: "false" },
  });
  assert.equal(forged.status(), 403);
});
