// Node-RED's settings for an instance the local driver runs (node-red's red.js loads this with
// require). Everything instance-specific comes from the environment the driver sets: the
// address to bind (always loopback) and the port. Nothing is installed at run time: the palette
// manager and automatic module installation are off, so an instance runs what the platform ships.
"use strict";

// This file runs inside Node-RED's process, where the driver's variables are the configuration.
/* eslint-disable no-restricted-properties, @typescript-eslint/no-require-imports -- CommonJS, as Node-RED loads it */
/* global process, module, require */
const port = Number(process.env.FLOWPLANE_NODE_RED_PORT);
if (!Number.isInteger(port) || port <= 0) {
  throw new Error("FLOWPLANE_NODE_RED_PORT must be the port to listen on");
}

// With the platform's address, flows and the rest live in the platform and only its team gets
// into the editor; without (the runtime's own tests), Node-RED's file storage and no sign-in.
const platformUrl = process.env.FLOWPLANE_PLATFORM_URL;
const platform = platformUrl
  ? require("./platform.cjs").connect({
      platformUrl,
      instanceId: process.env.FLOWPLANE_INSTANCE_ID,
      token: process.env.FLOWPLANE_INSTANCE_TOKEN,
    })
  : undefined;
// Flows read the environment (env.get): the instance's token is not theirs to read.
delete process.env.FLOWPLANE_INSTANCE_TOKEN;

module.exports = {
  ...(platform && { storageModule: platform.storage, adminAuth: platform.adminAuth }),
  uiHost: process.env.FLOWPLANE_NODE_RED_HOST || "127.0.0.1",
  uiPort: port,
  flowFile: "flows.json",
  logging: { console: { level: "info", metrics: false, audit: false } },
  externalModules: {
    autoInstall: false,
    palette: { allowInstall: false, allowUpload: false },
    modules: { allowInstall: false },
  },
  diagnostics: { enabled: false, ui: false },
  telemetry: { enabled: false },
  editorTheme: { tours: false, projects: { enabled: false } },
  functionExternalModules: false,
};
