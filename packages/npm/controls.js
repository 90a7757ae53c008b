// The broker's controls over its admin port: entities created through the Service Bus
// administration API (ATOM/XML) and Busbar's test controls (`/$busbar/…`), each request signed
// with a SAS token for the namespace key.
"use strict";

const crypto = require("node:crypto");

const KEY_NAME = "RootManageSharedAccessKey";
const KEY = "SAS_KEY_VALUE";
const NAMESPACE = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";

const escapeXml = (text) =>
  String(text).replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

const encodeEntity = (entity) => entity.split("/").map(encodeURIComponent).join("/");

function sasToken(url) {
  const audience = encodeURIComponent(url);
  const expiry = Math.floor(Date.now() / 1000) + 3600;
  const signature = crypto.createHmac("sha256", KEY).update(`${audience}\n${expiry}`).digest("base64");
  return `SharedAccessSignature sr=${audience}&sig=${encodeURIComponent(signature)}&se=${expiry}&skn=${KEY_NAME}`;
}

/** Requests to one broker's admin endpoint (`http://127.0.0.1:PORT`). */
class Controls {
  constructor(endpoint) {
    this.endpoint = endpoint;
  }

  async request(method, path, body, contentType = "application/json") {
    const url = this.endpoint + path;
    const headers = { Authorization: sasToken(url) };
    if (body !== undefined) headers["Content-Type"] = contentType;
    const answer = await fetch(url, { method, headers, body });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
    return text;
  }

  async json(method, path, document) {
    const text = await this.request(method, path, document && JSON.stringify(document));
    return text ? JSON.parse(text) : {};
  }

  putEntity(path, kind, properties = {}) {
    const elements = Object.entries(properties)
      .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
      .join("");
    const body =
      '<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">' +
      `<${kind} xmlns="${NAMESPACE}">${elements}</${kind}></content></entry>`;
    return this.request("PUT", `/${encodeEntity(path)}`, body, "application/atom+xml");
  }

  async purge(entity, deadLetter) {
    const query = deadLetter ? "?deadLetter=true" : "";
    return (await this.json("POST", `/$busbar/purge/${encodeEntity(entity)}${query}`)).purged;
  }

  async reset() {
    await this.json("POST", "/$busbar/reset");
  }

  advanceClock(by) {
    return this.json("POST", `/$busbar/clock/advance?by=${encodeURIComponent(by)}`);
  }

  async fault(entity, document) {
    await this.json("POST", `/$busbar/faults/${encodeEntity(entity)}`, document);
  }
}

module.exports = { Controls, KEY, KEY_NAME };
