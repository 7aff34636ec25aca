// Node-RED's settings for an instance the local driver runs (node-red's red.js loads this with
// require, before any flow exists). Everything instance-specific comes from the driver: the
// editor's listening socket and the instance's token, each on a descriptor of its own; the
// platform's socket in the environment. Node-RED listens on no TCP port. The palette manager
// installs nodes from the operator's registry (npm_config_registry; unless the instance's type
// turns it off) and, with the operator's allow-list, only what it names; function nodes' own
// modules and automatic installs stay off.
//
// This directory (settings.cjs and platform.cjs) is all of the platform's code a sandboxed
// instance sees: the driver binds it read-only into the sandbox.
"use strict";

// This file runs inside Node-RED's process, where the driver's variables are the configuration.
/* eslint-disable no-restricted-properties, @typescript-eslint/no-require-imports -- CommonJS, as Node-RED loads it */
/* global process, module, require, Buffer, __dirname */
const fs = require("node:fs");

// The editor's socket: listened on by the driver, in a directory of the platform's, and handed
// down as a descriptor (Node-RED's red.js passes uiPort to server.listen, which takes { fd }).
const editorFd = Number(process.env.FLOWPLANE_EDITOR_FD);
if (!Number.isInteger(editorFd) || editorFd <= 2) {
  throw new Error("FLOWPLANE_EDITOR_FD must be the editor's listening descriptor");
}
answerAddressOf(editorFd);

// The token comes on a descriptor, read once and closed: unlike the environment, which
// /proc/<pid>/environ keeps for the life of the process, it then exists only in this memory.
const tokenFd = process.env.FLOWPLANE_INSTANCE_TOKEN_FD;
delete process.env.FLOWPLANE_INSTANCE_TOKEN_FD;
const token = tokenFd ? readAll(Number(tokenFd)).trim() : undefined;

closeInheritedDescriptors(editorFd);

/** The modules the palette may install (names, `*` for any text), when the operator says. */
const paletteAllowList = process.env.FLOWPLANE_PALETTE_ALLOW_LIST
  ? JSON.parse(process.env.FLOWPLANE_PALETTE_ALLOW_LIST)
  : undefined;

// The driver asks for a stop by closing stdin: a signal sent from outside the sandbox would reach
// its init process, not Node-RED. The end of stdin is also what a dead platform leaves behind.
if (process.env.FLOWPLANE_STOP_ON_STDIN_END === "1") {
  const stop = () => process.kill(process.pid, "SIGTERM");
  process.stdin.on("end", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
}

// With the platform's address, flows and the rest live in the platform and only its team gets
// into the editor; without (the runtime's own tests), Node-RED's file storage and no sign-in.
const platformUrl = process.env.FLOWPLANE_PLATFORM_URL;
const platform = platformUrl
  ? require("./platform.cjs").connect({
      platformUrl,
      instanceId: process.env.FLOWPLANE_INSTANCE_ID,
      // Where browsers reach the platform's pages (its sign-in), not where this process does.
      baseUrl: process.env.FLOWPLANE_BASE_URL || platformUrl,
      teamId: process.env.FLOWPLANE_TEAM_ID,
      token: token ?? "",
      socketPath: process.env.FLOWPLANE_PLATFORM_SOCKET || undefined,
    })
  : undefined;

// The team library in the editor's library panel (FlowFuse's source): the plugin that reads and
// writes it is in team-library/, loaded as a module from nodesDir; its calls go through
// platform.cjs with the instance's token, which the editor never sees (Node-RED sends the editor
// a library's id, label and icon only).
const teamLibrary = platform?.teamLibrary && {
  nodesDir: [require("node:path").join(__dirname, "team-library")],
  library: {
    sources: [
      {
        id: "flowforge-team-library",
        type: "flowforge-team-library",
        label: "Team Library",
        icon: "font-awesome/fa-users",
        client: platform.teamLibrary,
      },
    ],
  },
};

// The editor's header: "Flowplane · <instance>", leading back to the instance's page in the
// platform's console (Node-RED puts the title in as HTML: it is escaped here).
const consoleUrl = process.env.FLOWPLANE_CONSOLE_URL;
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const header = consoleUrl && {
  title: `Flowplane · ${escapeHtml(process.env.FF_INSTANCE_NAME ?? "")}`,
  url: consoleUrl,
};

module.exports = {
  ...(platform && {
    storageModule: platform.storage,
    adminAuth: platform.adminAuth,
    httpAdminMiddleware: platform.editorMiddleware,
  }),
  ...(teamLibrary && { nodesDir: teamLibrary.nodesDir }),
  // uiHost is not used with a descriptor; it only names the socket in Node-RED's log.
  uiHost: "editor-socket",
  uiPort: { fd: editorFd },
  flowFile: "flows.json",
  logging: { console: { level: "info", metrics: false, audit: false } },
  externalModules: {
    autoInstall: false,
    // The palette installs from the npm registry, in this sandbox (the platform turns it off
    // where the instance type says so); what it installs, the platform keeps and installs again
    // at every start. Uploads are off: a module the registry does not have could not be.
    // With the operator's allow-list (PALETTE_ALLOW_LIST), the palette installs and loads only
    // what it names (and the platform's own team library); the rest is denied.
    palette: {
      allowInstall: process.env.FLOWPLANE_PALETTE_INSTALL !== "0",
      allowUpload: false,
      ...(paletteAllowList && {
        allowList: [...paletteAllowList, "@flowplane/node-red-team-library"],
        denyList: ["*"],
      }),
    },
    modules: { allowInstall: false },
  },
  diagnostics: { enabled: false, ui: false },
  telemetry: { enabled: false },
  editorTheme: {
    tours: false,
    projects: { enabled: false },
    ...(header && { header }),
    ...(teamLibrary && { library: teamLibrary.library }),
  },
  functionExternalModules: false,
};

/** Everything readable on `fd` until its end; the descriptor is closed afterwards. */
function readAll(fd) {
  const chunks = [];
  const buffer = Buffer.alloc(4096);
  try {
    for (;;) {
      let read;
      try {
        read = fs.readSync(fd, buffer);
      } catch (error) {
        if (error.code !== "EAGAIN") throw error;
        // A non-blocking descriptor with nothing yet: the driver writes at once, so wait briefly.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
  } finally {
    fs.closeSync(fd);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A server listening on a descriptor has no address in Node (address() is null), and red.js
 * reads `server.address().port` once it listens: that server's address is said to be the
 * descriptor, so Node-RED logs "Server now running at http://editor-socket:fd3/".
 */
function answerAddressOf(fd) {
  const net = require("node:net");
  const address = net.Server.prototype.address;
  net.Server.prototype.address = function addressOrDescriptor() {
    const found = address.call(this);
    if (found === null && this._handle && this._handle.fd === fd) {
      return { address: "editor-socket", family: "unix", port: `fd${fd}` };
    }
    return found;
  };
}

/**
 * Closes descriptors this process inherited without asking for them (whatever started the
 * platform may have left some open): inside a sandbox, a descriptor of a directory outside it is
 * a way out. Node's own descriptors are all close-on-exec, so those without the flag that
 * survived the exec into this process are the inherited ones; 0-2 are stdio.
 */
function closeInheritedDescriptors(keep) {
  let names;
  try {
    names = fs.readdirSync("/proc/self/fd");
  } catch {
    return; // Not Linux: nothing to check this way.
  }
  const O_CLOEXEC = 0o2000000;
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || fd === keep) continue;
    let info;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
    } catch {
      continue; // The descriptor used to list the directory, closed again.
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags && (parseInt(flags[1], 8) & O_CLOEXEC) === 0) {
      try {
        fs.closeSync(fd);
      } catch {
        // Already gone.
      }
    }
  }
}
