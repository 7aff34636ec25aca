// Makes an instance's user directory hold exactly the modules the platform names, and installs
// them: run by the local driver **inside the instance's sandbox, as the instance's user**, in its
// user directory (`node modules.cjs <npm-cli.js> <modules as JSON> <npm's arguments…>`). Its
// package.json and node_modules are the tenant's (a flow may have made them links to anywhere),
// so the platform never opens them itself: what a link here reaches is what the instance reaches.
//
// Prints MODULES_IN_PLACE and exits 0 when package.json already names exactly these modules and
// each is installed (at its version, when an exact one); else prints INSTALLING, writes
// package.json's dependencies and runs npm, exiting with npm's code.
"use strict";

/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS, run by node directly */
/* global process, require, console */
const fs = require("node:fs");
const { spawnSync } = require("node:child_process");

const IN_PLACE = "flowplane-modules: in place";
const INSTALLING = "flowplane-modules: installing";
/** Node-RED's own first contents of a user directory's package.json. */
const DEFAULT_PACKAGE = {
  name: "node-red-project",
  description: "A Node-RED Project",
  version: "0.0.1",
  private: true,
};
const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

const [npmCli, json, ...npmArgs] = process.argv.slice(2);
const modules = JSON.parse(json);

function readJson(path) {
  try {
    const value = JSON.parse(fs.readFileSync(path, "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const sorted = (object) =>
  JSON.stringify(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
const manifest = readJson("package.json") || { ...DEFAULT_PACKAGE };
const inPlace = Object.entries(modules).every(([name, version]) => {
  const found = readJson(`node_modules/${name}/package.json`);
  return found !== undefined && (!EXACT_VERSION.test(version) || found.version === version);
});
if (sorted(manifest.dependencies || {}) === sorted(modules) && inPlace) {
  console.log(IN_PLACE);
  process.exit(0);
}
console.log(INSTALLING);
fs.writeFileSync(
  "package.json",
  `${JSON.stringify({ ...manifest, dependencies: modules }, null, 4)}\n`,
);
if (!npmCli) {
  console.error("npm ERR! npm was not found on the platform's PATH");
  process.exit(1);
}
const npm = spawnSync(process.execPath, [npmCli, ...npmArgs], { stdio: "inherit" });
if (npm.error) console.error(`npm ERR! ${npm.error.message}`);
process.exit(npm.status ?? 1);
