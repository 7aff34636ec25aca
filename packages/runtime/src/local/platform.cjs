// What connects a Node-RED to the platform: its storage module (flows, credentials, settings and
// library live in the platform's database, reached through /storage/<instanceId>/…)
// and its editor's sign-in (adminAuth: a Flowplane username and password, or a Flowplane token
// as a bearer header; the platform decides who gets in and with what rights). Every call carries
// the instance's own token, which reaches nothing but this instance's storage routes.
"use strict";
/* global fetch, AbortSignal, URLSearchParams, module */

const TIMEOUT_MS = 30_000;

/**
 * @param {{ platformUrl: string, instanceId: string, token: string }} options
 */
function connect(options) {
  const base = `${options.platformUrl.replace(/\/$/, "")}/storage/${options.instanceId}`;

  async function call(method, path, body) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (response.status === 404 && method === "GET") return undefined;
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      const error = new Error(
        `platform storage ${method} ${path}: HTTP ${response.status} ${text}`,
      );
      error.status = response.status;
      throw error;
    }
    return response.status === 204 ? undefined : response.json();
  }

  const storage = {
    init: async () => {},
    getFlows: async () => (await call("GET", "/flows")) ?? [],
    saveFlows: (flows) => call("POST", "/flows", flows),
    getCredentials: async () => (await call("GET", "/credentials")) ?? {},
    saveCredentials: (credentials) => call("POST", "/credentials", credentials),
    getSettings: async () => (await call("GET", "/settings")) ?? {},
    saveSettings: (settings) => call("POST", "/settings", settings),
    // The editor's session tokens stay in this process: no token value is stored anywhere (a
    // restarted Node-RED asks people to sign in again; Flowplane tokens are not affected).
    getSessions: async () => ({}),
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

  /** The editor's user for an answer of the platform, or null: refused. */
  async function user(path, body) {
    try {
      const answer = await call("POST", path, body);
      return answer && typeof answer.username === "string"
        ? { username: answer.username, permissions: answer.permissions }
        : null;
    } catch (error) {
      if (error.status === 401 || error.status === 403 || error.status === 404) return null;
      throw error;
    }
  }

  const adminAuth = {
    type: "credentials",
    // Node-RED's own session tokens, issued after a sign-in, last a day.
    sessionExpiryTime: 86_400,
    users: (username) => user("/auth/user", { username }),
    authenticate: (username, password) => user("/auth/password", { username, password }),
    tokens: (token) => user("/auth/token", { token }),
    tokenHeader: "authorization",
  };

  return { storage, adminAuth };
}

module.exports = { connect };
