#!/usr/bin/env node
// `busbar` on the PATH of an npm project: runs the binary this package carries for the machine.
"use strict";

const { spawnSync } = require("node:child_process");
const { binaryPath } = require("..");

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
if (result.error) throw result.error;
process.exitCode = result.status ?? 1;
