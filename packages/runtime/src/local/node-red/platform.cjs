// What connects a Node-RED to the platform: its storage module (flows, credentials, settings and
// library live in the platform's database, reached through /storage/<instanceId>/…)
// and its editor's sign-in (adminAuth: a Flowplane username and password, or a Flowplane token
// as a bearer header; the platform decides who gets in and with what rights). Every call carries
// the instance's own token, which reaches nothing but this instance's storage routes.
//
// Node-RED leaves some of these calls' failures unhandled (the sign-in; settings saved in the
// background), and an unhandled rejection ends its process: so whatever the platform answers —
// 400, 429, 5xx, nothing in time, no connection — nothing here rejects where Node-RED would not
// catch it. Busy or unreachable answers are tried again a few times first: every call here is a
// read or a whole replacement, so a repeat changes nothing.
"use strict";
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS, as Node-RED loads it */
/* global fetch, AbortSignal, URLSearchParams, module, require, setTimeout, console, Buffer, URL */
const crypto = require("node:crypto");
const fs = require("node:fs/promises");
const http = require("node:http");
const path = require("node:path");

const TIMEOUT_MS = 30_000;
/** Attempts of one call when the platform is busy (429, 502-504) or unreachable. */
const ATTEMPTS = 4;
const MAX_DELAY_MS = 5_000;
/** How long settings saved in the background are retried before they are given up. */
const SETTINGS_RETRY_MS = 60_000;
/** How often the editor sessions in use are asked after (an open editor's websocket). */
const SESSION_CHECK_MS = 5_000;
/** Sessions watched at most; beyond, the longest unseen are no longer watched. */
const WATCHED_MAX = 1_000;
/** How long a sign-in may take on the platform's page. */
const SIGN_IN_MS = 10 * 60_000;

/**
 * The passport strategy Node-RED's "strategy" sign-in needs to exist: never run, as the sign-in's
 * two routes are answered before Node-RED's own (editorMiddleware).
 */
class PlatformStrategy {
  constructor() {
    this.name = "flowplane";
  }
  authenticate() {
    this.fail(401);
  }
}

/** Node-RED's own first contents of a user directory's package.json. */
const DEFAULT_PACKAGE = {
  name: "node-red-project",
  description: "A Node-RED Project",
  version: "0.0.1",
  private: true,
};

class PlatformError extends Error {
  constructor(message, status, retryAfterMs) {
    super(message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
  /** A busy or unreachable platform, worth another try; any other answer is final. */
  get transient() {
    return (
      this.status === undefined || this.status === 429 || (this.status >= 502 && this.status <= 504)
    );
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @param {{ platformUrl: string, baseUrl: string, instanceId: string, teamId?: string,
 *   token: string, socketPath?: string }} options `baseUrl`: where browsers reach the platform's
 *   sign-in page. `socketPath`: the platform's Unix socket, which every call goes
 *   through (the URL's path is kept, its host is not used).
 */
function connect(options) {
  const platformUrl = options.platformUrl.replace(/\/$/, "");
  const base = `${platformUrl}/storage/${options.instanceId}`;
  const send = transport(options.socketPath);

  async function once(method, path, body) {
    let response;
    try {
      response = await send(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new PlatformError(`platform storage ${method} ${path}: ${error.message}`);
    }
    if (response.status === 404 && method === "GET") return undefined;
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      const seconds = Number(response.headers.get("retry-after"));
      throw new PlatformError(
        `platform storage ${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`,
        response.status,
        Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined,
      );
    }
    if (response.status === 204) return undefined;
    try {
      return await response.json();
    } catch (error) {
      throw new PlatformError(
        `platform storage ${method} ${path}: ${error.message}`,
        response.status,
      );
    }
  }

  async function call(method, path, body, attempts = ATTEMPTS) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(method, path, body);
      } catch (error) {
        if (!(error instanceof PlatformError) || !error.transient || attempt >= attempts)
          throw error;
        await sleep(Math.min(error.retryAfterMs ?? 250 * 2 ** attempt, MAX_DELAY_MS));
      }
    }
  }

  // Node-RED saves its settings without waiting in places (its instance id at start, the
  // editor's telemetry choice): a rejection there would end the process. Saves therefore resolve
  // once the platform has them, or once it refused them for good or stayed unreachable for a
  // minute, which is logged: the settings are then kept in memory only.
  async function saveSettings(settings) {
    const deadline = Date.now() + SETTINGS_RETRY_MS;
    for (;;) {
      try {
        await call("POST", "/settings", settings);
        return;
      } catch (error) {
        if (!error.transient || Date.now() > deadline) {
          console.error(`[flowplane] settings not saved: ${error.message}`);
          return;
        }
        await sleep(Math.min(error.retryAfterMs ?? 1_000, MAX_DELAY_MS));
      }
    }
  }

  const storage = {
    // What Node-RED's own file storage sets up in the user directory, so that its registry finds
    // the project's package.json (and, later, the modules installed beside it).
    init: async (settings) => {
      if (!settings.userDir) return;
      await fs.mkdir(path.join(settings.userDir, "node_modules"), { recursive: true });
      await fs
        .writeFile(
          path.join(settings.userDir, "package.json"),
          `${JSON.stringify(DEFAULT_PACKAGE, null, 4)}\n`,
          { flag: "wx" },
        )
        .catch((error) => {
          if (error.code !== "EEXIST") throw error;
        });
    },
    getFlows: async () => (await call("GET", "/flows")) ?? [],
    saveFlows: (flows) => call("POST", "/flows", flows),
    getCredentials: async () => (await call("GET", "/credentials")) ?? {},
    saveCredentials: (credentials) => call("POST", "/credentials", credentials),
    getSettings: async () => (await call("GET", "/settings")) ?? {},
    saveSettings,
    // The editor's session tokens stay in this process: no token value is stored anywhere (a
    // restarted Node-RED asks people to sign in again; Flowplane tokens are not affected). Node-RED
    // keeps the object given here as its map of sessions, which is how `endSession` reaches it.
    getSessions: async () => nodeRedSessions,
    saveSessions: async () => {},
    getLibraryEntry: async (type, path) => {
      const query = new URLSearchParams({ path: path ?? "" });
      const entry = await call("GET", `/library/${encodeURIComponent(type)}?${query}`);
      if (entry === undefined) {
        const error = new Error("not found");
        error.code = "forbidden";
        throw error;
      }
      return entry;
    },
    saveLibraryEntry: (type, path, meta, body) =>
      call("POST", `/library/${encodeURIComponent(type)}`, { path, meta: meta ?? {}, body }),
  };

  // Node-RED's map of its own sessions (see getSessions): none of its own are made, as the
  // platform's editor sessions stand in for them.
  const nodeRedSessions = {};
  /** The platform's editor sessions in use here, by when last seen. */
  const watched = new Map();
  let checkTimer;

  /**
   * An open editor's websocket (Node-RED's comms) is authenticated once, when it opens: a session
   * the platform stops accepting (signed out, removed from the team, a role without the editor,
   * a password change, a suspension) would keep it open. So the sessions in use are asked after
   * every few seconds while there are any (a check, which does not count as the session's
   * activity), and a refused one ends here too.
   */
  function watch(token) {
    watched.delete(token);
    watched.set(token, Date.now());
    if (watched.size > WATCHED_MAX) watched.delete(watched.keys().next().value);
    if (!checkTimer) {
      checkTimer = setTimeout(checkSessions, SESSION_CHECK_MS);
      checkTimer.unref?.();
    }
  }

  async function checkSessions() {
    for (const token of [...watched.keys()]) {
      try {
        await call("POST", "/auth/token", { token, check: true }, 1);
      } catch (error) {
        // Busy or unreachable: asked again next time; any other answer is a refusal.
        if (!(error instanceof PlatformError) || !error.transient) endSession(token);
      }
    }
    checkTimer = undefined;
    if (watched.size > 0) {
      checkTimer = setTimeout(checkSessions, SESSION_CHECK_MS);
      checkTimer.unref?.();
    }
  }

  /**
   * Ends what Node-RED holds open for a token: its comms connections, which Node-RED closes (with
   * `{ auth: "fail" }`, so the editor asks to sign in) when it finds the token's session expired.
   */
  function endSession(token) {
    watched.delete(token);
    const tokens = nodeRedTokens();
    if (!tokens) return;
    nodeRedSessions[token] = {
      user: "",
      client: "node-red-editor",
      scope: "",
      accessToken: token,
      expires: 0,
    };
    tokens.get(token).catch(() => {});
  }

  // Signing in happens on the platform's own page only (OAuth 2.0's authorization-code grant, as
  // FlowFuse's editors sign in): the editor's sign-in goes to the platform's /account/authorize,
  // which sends the browser back to /auth/strategy/callback with a one-time code; the code is
  // exchanged here, with the instance's token, for an editor session of the platform's (bound to
  // this instance), which the editor then uses as its bearer. No password, platform session or
  // personal token ever reaches this process.
  // A sign-in's `state` is made here and checked on the way back: a random nonce and when it
  // expires, with an HMAC of both under a key of this process. Nothing is kept per sign-in, so
  // however many are started (anyone can start one), none pushes out another.
  const stateKey = crypto.randomBytes(32);
  const stateMac = (body) => crypto.createHmac("sha256", stateKey).update(body).digest("base64url");

  function startSignIn(response) {
    const body = `${crypto.randomBytes(16).toString("base64url")}.${Date.now() + SIGN_IN_MS}`;
    const target = new URL("/account/authorize", `${options.baseUrl}/`);
    target.searchParams.set("response_type", "code");
    target.searchParams.set("client_id", options.instanceId);
    target.searchParams.set("state", `${body}.${stateMac(body)}`);
    response.redirect(target.toString());
  }

  /** Whether `state` is one this process made, and not expired. */
  function validState(state) {
    if (typeof state !== "string" || state.length > 200) return false;
    const parts = state.split(".");
    if (parts.length !== 3) return false;
    const body = `${parts[0]}.${parts[1]}`;
    const given = Buffer.from(parts[2]);
    const expected = Buffer.from(stateMac(body));
    return (
      given.length === expected.length &&
      crypto.timingSafeEqual(given, expected) &&
      Number(parts[1]) > Date.now()
    );
  }

  async function finishSignIn(request, response) {
    const { code, state } = request.query;
    if (typeof code !== "string" || !validState(state)) {
      response
        .status(400)
        .type("text/plain")
        .send("This sign-in has expired: open the editor again.\n");
      return;
    }
    let answer;
    try {
      answer = await call("POST", "/auth/code", { code }, 1);
    } catch (error) {
      if (error.status === undefined || error.status === 429 || error.status >= 500) {
        console.log(`[flowplane] editor sign-in refused: ${error.message}`);
      }
      response.status(403).type("text/plain").send("The platform refused this sign-in.\n");
      return;
    }
    if (!answer || typeof answer.token !== "string") {
      response.status(403).type("text/plain").send("The platform refused this sign-in.\n");
      return;
    }
    watch(answer.token);
    // Node-RED's editor takes its session from `access_token` (as after its own strategies).
    response.redirect(`/?access_token=${encodeURIComponent(answer.token)}`);
  }

  // Node-RED's admin routes, before its own: the sign-in above, and signing out (POST
  // /auth/revoke, whose bearer is the session signing out): once Node-RED has accepted it, the
  // platform ends the session too, and its websocket closes.
  function editorMiddleware(request, response, next) {
    if (request.method === "GET" && request.path === "/auth/strategy") return startSignIn(response);
    if (request.method === "GET" && request.path === "/auth/strategy/callback") {
      finishSignIn(request, response).catch(next);
      return;
    }
    if (request.method === "POST" && request.path === "/auth/revoke") {
      const header = request.headers.authorization;
      const token = typeof header === "string" && /^Bearer /.test(header) ? header.slice(7) : "";
      if (token) {
        response.on("finish", () => {
          if (response.statusCode >= 300) return;
          endSession(token);
          call("POST", "/auth/revoke", { token }).catch((error) => {
            console.log(`[flowplane] editor sign-out not passed on: ${error.message}`);
          });
        });
      }
    }
    next();
  }

  /**
   * The editor's user for a bearer, as the platform answers it (its editor sessions only), or
   * null: refused. Node-RED does not catch what this returns, so every failure is a refusal.
   */
  async function tokenUser(token) {
    try {
      const answer = await call("POST", "/auth/token", { token }, 1);
      if (!answer || typeof answer.username !== "string") return null;
      if (answer.session === true) watch(token);
      return { username: answer.username, permissions: answer.permissions };
    } catch (error) {
      // A refusal for bad input is the answer; the platform failing to answer is worth a line.
      if (error.status === undefined || error.status === 429 || error.status >= 500) {
        console.log(`[flowplane] editor request refused: ${error.message}`);
      }
      return null;
    }
  }

  const adminAuth = {
    type: "strategy",
    strategy: {
      name: "flowplane",
      label: "Sign in with Flowplane",
      icon: "fa-sign-in",
      // The editor goes to the platform's page at once, without a button to press first.
      autoLogin: true,
      strategy: PlatformStrategy,
      options: {},
    },
    sessionExpiryTime: 86_400,
    // Node-RED keeps no users of its own: every request's bearer is decided by the platform.
    users: async () => null,
    tokens: tokenUser,
    tokenHeader: "authorization",
  };

  return {
    storage,
    adminAuth,
    editorMiddleware,
    teamLibrary: options.teamId
      ? teamLibrary(platformUrl, options.teamId, options.token, send)
      : undefined,
  };
}

/**
 * Node-RED's own session store (in the editor API), which closes a session's comms connections
 * when it finds the session expired; undefined where it is not found (nothing then closes them,
 * and the platform's refusals still hold on every HTTP request).
 */
let tokensModule;
function nodeRedTokens() {
  if (tokensModule === undefined) {
    try {
      tokensModule = require.main.require("@node-red/editor-api/lib/auth/tokens");
    } catch (error) {
      console.log(`[flowplane] open editors cannot be closed on sign-out: ${error.message}`);
      tokensModule = null;
    }
  }
  return tokensModule ?? undefined;
}

/**
 * The team library's entries, for the library source in team-library/: a folder's listing or an
 * entry (a flow as its JSON, anything else as its text), and saving one. Errors carry the code
 * Node-RED's library API turns into its status (`forbidden`: 403, `not_found`: 404).
 */
function teamLibrary(platformUrl, teamId, token, send) {
  const base = `${platformUrl}/storage/library/${encodeURIComponent(teamId)}`;
  const url = (path, type) => {
    const segments = (path ?? "").split("/").filter((segment) => segment !== "");
    const query = type === undefined ? "" : `?${new URLSearchParams({ type })}`;
    return `${base}/${segments.map(encodeURIComponent).join("/")}${query}`;
  };

  async function request(method, target, body) {
    let response;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await send(target, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (error) {
        if (attempt >= ATTEMPTS) throw libraryError(`team library: ${error.message}`);
        await sleep(250 * 2 ** attempt);
        continue;
      }
      const busy = response.status === 429 || (response.status >= 502 && response.status <= 504);
      if (!busy || attempt >= ATTEMPTS) break;
      await sleep(250 * 2 ** attempt);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      const code =
        response.status === 403 ? "forbidden" : response.status === 404 ? "not_found" : undefined;
      throw libraryError(`team library: HTTP ${response.status} ${text.slice(0, 200)}`, code);
    }
    return response;
  }

  return {
    getEntry: async (type, path) => {
      const response = await request("GET", url(path, type));
      const json = (response.headers.get("content-type") ?? "").startsWith("application/json");
      return json ? response.json() : response.text();
    },
    saveEntry: async (type, path, meta, body) => {
      await request("POST", url(path), { type, meta: meta ?? {}, body });
    },
  };
}

/**
 * How calls reach the platform: `fetch` on its URL, or, given the platform's Unix socket (in the
 * sandbox, /run/flowplane/platform.sock: an instance in a network of its own reaches nothing of
 * the host's over TCP), HTTP through that socket. Either way it answers as fetch does, as far as
 * the calls here use it (status, ok, headers.get, text, json), and the signal covers the whole
 * answer.
 */
function transport(socketPath) {
  if (!socketPath) return fetch;
  return (target, init) =>
    new Promise((resolve, reject) => {
      const url = new URL(target);
      const body = init.body === undefined ? undefined : Buffer.from(init.body);
      const request = http.request({
        socketPath,
        method: init.method,
        path: `${url.pathname}${url.search}`,
        headers: {
          ...init.headers,
          host: url.host,
          ...(body === undefined ? {} : { "content-length": String(body.length) }),
        },
        signal: init.signal,
      });
      request.on("error", reject);
      request.on("response", (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = response.statusCode ?? 0;
          resolve({
            status,
            ok: status >= 200 && status < 300,
            headers: {
              get: (name) => {
                const value = response.headers[name.toLowerCase()];
                return value === undefined ? null : [].concat(value).join(", ");
              },
            },
            text: async () => text,
            json: async () => JSON.parse(text),
          });
        });
      });
      request.end(body);
    });
}

function libraryError(message, code) {
  const error = new Error(message);
  if (code) error.code = code;
  return error;
}

module.exports = { connect };
