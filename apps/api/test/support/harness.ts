// Starts the real server on a loopback port over a fresh database, and gives tests an HTTP client
// that checks every response against the OpenAPI document the server itself serves.
import { generateToken, tokenDigest, type TokenScope } from "@flowplane/auth";
import { addMember, type Db, insertToken, insertUser } from "@flowplane/db";
import { createTestDb, type TestDb } from "@flowplane/db/testing";
import { LocalDriver } from "@flowplane/runtime";
import { inheritedEnv } from "./env";
import { type OpenApiDocument, watchReplies } from "./document-check";
import { InMemoryDriver } from "./in-memory-driver";
import type { FastifyInstance } from "fastify";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { Server as HttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { expect } from "vitest";
import {
  acceptInstanceConnection,
  type AppOptions,
  buildApp,
  createLogger,
  ensureInitialAdmin,
  INITIAL_PASSWORD_FILE,
  INITIAL_TOKEN_FILE,
  recordBaseUrl,
} from "../../src/index";

export const TOKEN_SECRET = "test-secret-0123456789-abcdefghijklmnopqrstuvwxyz";

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface PageReply {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

export interface TestServer {
  url: string;
  db: Db;
  testDb: TestDb;
  app: FastifyInstance;
  dataDir: string;
  adminToken: string;
  /** Every line the server logged. */
  logs: string[];
  document: OpenApiDocument;
  request(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** The origin of the server's BASE_URL: what a page of its own sends as `Origin`. */
  origin: string;
  /** A user with a password, created through the API by the administrator. */
  userWithPassword(options?: {
    admin?: boolean;
    email?: string;
    name?: string;
  }): Promise<{ id: string; username: string; password: string }>;
  /** Signs in with POST /account/login (expecting success): the session cookie's value. */
  signIn(username: string, password: string): Promise<string>;
  /**
   * A request from a signed-in browser: the session cookie, and the `Origin` a page of this
   * platform sends (`origin: null`: none).
   */
  asSession(
    sid: string,
    method: string,
    path: string,
    options?: { body?: unknown; origin?: string | null },
  ): Promise<Reply>;
  /**
   * A browser without script: an HTML page asked for, redirects not followed, a form posted
   * URL-encoded with the `Origin` of a page of this platform (`origin: null`: none).
   */
  page(
    method: "GET" | "POST",
    path: string,
    options?: { sid?: string; form?: Record<string, string | string[]>; origin?: string | null },
  ): Promise<PageReply>;
  /** The user's role in the team, read from the database; undefined when not a member. */
  roleOf(teamId: string, userId: string): Promise<number | undefined>;
  /** A user with a token (full rights unless `scope` narrows it), optionally in teams. */
  user(options?: {
    username?: string;
    admin?: boolean;
    scope?: Partial<TokenScope>;
    teams?: { id: string; role: number }[];
  }): Promise<{ id: string; token: string; tokenId: string }>;
  close(): Promise<void>;
}

let userCounter = 0;

/** The session cookie's value that a reply sets, if it sets one. */
export function sessionOf(reply: { headers: Headers }): string | undefined {
  const cookie = reply.headers.getSetCookie().find((c) => c.startsWith("sid="));
  return cookie?.split(";")[0]!.slice("sid=".length) || undefined;
}

/**
 * A full deploy of `flows` through a hosted Node-RED's admin API, as the editor sends it, with a
 * Flowplane token (or an editor session's): Node-RED answers 204, or 401 to a role that may not
 * deploy.
 */
/**
 * A token for one instance's editor, as a script gets it: created with a person's own token
 * (`POST /api/v1/projects/{id}/editor/token`), which itself never reaches the instance.
 */
export async function editorToken(
  server: Pick<TestServer, "request">,
  instanceId: string,
  personalToken: string,
): Promise<{ token: string; url: string; permissions: string }> {
  const reply = await server.request("POST", `/api/v1/projects/${instanceId}/editor/token`, {
    token: personalToken,
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { token: string; url: string; permissions: string };
}

/** Deploys flows through the instance's editor (Node-RED's admin API), as a script does. */
export async function deployFlows(
  server: Pick<TestServer, "request">,
  instanceId: string,
  personalToken: string,
  flows: unknown[],
): Promise<Response> {
  const { token, url } = await editorToken(server, instanceId, personalToken);
  return fetch(`${url}/flows`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "Node-RED-Deployment-Type": "full",
    },
    body: JSON.stringify(flows),
  });
}

/** A port nothing listens on now (for a server that must know its own URL before it listens). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function startServer(
  options: {
    db?: TestDb;
    /** Listen on this port (default: any free one). */
    port?: number;
    /** Default http://127.0.0.1:3000, as a server behind a proxy whose public URL differs. */
    baseUrl?: string;
    corsOrigins?: string[];
    /** TRUST_PROXY: the proxies whose X-Forwarded-* are believed. */
    trustProxy?: AppOptions["trustProxy"];
    sessionMaxAgeMs?: number;
    sessionIdleMs?: number;
    rateLimits?: AppOptions["rateLimits"];
    /** "embedded": aedes on a free port, keeping its data in the data directory. */
    broker?: AppOptions["broker"] | "embedded";
    /** Reuse this data directory (a restarted server); the caller removes it. */
    dataDir?: string;
    /**
     * Run hosted instances: `true` with the local driver (real Node-RED processes) in the data
     * directory; "in-memory" with a driver that runs nothing (the walks of every operation).
     */
    instances?: boolean | "in-memory";
    /** With `instances: "in-memory"`: this driver instead of a new InMemoryDriver (a test's own). */
    inMemoryDriver?: InMemoryDriver;
    /** With `instances: true`: how long a stopping Node-RED has before it is killed (5 s). */
    stopGraceMs?: number;
    /**
     * With `instances: true`: ports of the host's loopback that instances reach at the same port of
     * their own 127.0.0.1 (a test's server a flow calls), besides the platform's own (its broker).
     */
    instanceHostPorts?: number[];
    /** The live device log stream's heartbeat and recheck intervals. */
    deviceLogStream?: AppOptions["deviceLogStream"];
    /** The events stream's timings and bound. */
    eventStream?: AppOptions["eventStream"];
    /**
     * Webhooks: hosts allowed though not public (default 127.0.0.1: the walks' hooks point at a
     * closed loopback port), and the delivery worker's figures.
     */
    webhookAllowedHosts?: string[];
    webhookDelivery?: AppOptions["webhookDelivery"];
    /** Serve GET /metrics to this bearer token. */
    metricsToken?: string;
    metricsCountsTtlMs?: number;
  } = {},
): Promise<TestServer> {
  const testDb = options.db ?? (await createTestDb());
  const db = testDb.db;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "flowplane-test-")));
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  await ensureInitialAdmin(db, TOKEN_SECRET, dataDir);
  const adminToken = (await readFile(join(dataDir, INITIAL_TOKEN_FILE), "utf8")).trim();
  // With instances, BASE_URL is where the server listens: editors are served on its port
  // (`<name>.localhost:<port>`), which the tests' fetch resolves to loopback (localhost-names.ts).
  const port = options.port ?? (options.instances === true ? await freePort() : 0);
  const baseUrl =
    options.baseUrl ??
    (options.instances === true ? `http://127.0.0.1:${port}` : "http://127.0.0.1:3000");
  const connections: { server?: HttpServer; mqttPort?: number } = {};
  const app = await buildApp({
    db,
    tokenSecret: TOKEN_SECRET,
    baseUrl,
    // `debug`: the request lines too (input-walk reads them).
    logger: createLogger("debug", stream),
    corsOrigins: options.corsOrigins,
    trustProxy: options.trustProxy,
    sessionMaxAgeMs: options.sessionMaxAgeMs,
    sessionIdleMs: options.sessionIdleMs,
    rateLimits: options.rateLimits,
    deviceLogStream: options.deviceLogStream,
    eventStream: options.eventStream,
    webhookAllowedHosts: options.webhookAllowedHosts ?? ["127.0.0.1"],
    webhookDelivery: options.webhookDelivery,
    // Rollouts move on quickly: a test waits on their state, not on a tick.
    rolloutTickMs: 100,
    broker:
      options.broker === "embedded"
        ? { mode: "embedded", host: "127.0.0.1", port: 0, dataDir: join(dataDir, "mqtt") }
        : options.broker,
    instances:
      options.instances === "in-memory"
        ? { driver: options.inMemoryDriver ?? new InMemoryDriver() }
        : options.instances
          ? {
              driver: new LocalDriver({
                root: join(dataDir, "instances"),
                platformConnection: (id, socket) =>
                  acceptInstanceConnection(connections.server, id, socket),
                platformPorts: () => [
                  ...(connections.mqttPort ? [connections.mqttPort] : []),
                  ...(options.instanceHostPorts ?? []),
                ],
                baseEnv: inheritedEnv,
                stopGraceMs: options.stopGraceMs ?? 5_000,
              }),
            }
          : undefined,
    initialPasswordFile: join(dataDir, INITIAL_PASSWORD_FILE),
    metricsToken: options.metricsToken,
    metricsCountsTtlMs: options.metricsCountsTtlMs,
  });
  const watch = watchReplies(app);
  connections.server = app.server;
  connections.mqttPort = app.mqttPort;
  await app.listen({ host: "127.0.0.1", port });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  const url = `http://127.0.0.1:${address.port}`;
  // As the platform does once it listens (DATA_DIR/base-url): its BASE_URL when given, else where
  // it listens.
  await recordBaseUrl(dataDir, options.baseUrl ?? url);

  const raw = async (
    method: string,
    path: string,
    opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? adminToken : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text && response.headers.get("content-type")?.includes("application/json")) {
      parsed = JSON.parse(text);
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  const document = (await raw("GET", "/api/json")).body as OpenApiDocument;
  watch.useDocument(document);

  const server: TestServer = {
    url,
    db,
    testDb,
    app,
    dataDir,
    adminToken,
    logs,
    document,
    async request(method, path, opts) {
      const reply = await raw(method, path, opts);
      const requestId = reply.headers.get("x-request-id");
      if (requestId) expect(watch.problemsOf(requestId), "the served document").toEqual([]);
      return reply;
    },
    origin: new URL(baseUrl).origin,
    async userWithPassword(opts = {}) {
      const n = ++userCounter;
      const username = `person-${n}-${Math.random().toString(36).slice(2, 6)}`;
      const password = `correct horse ${n} battery`;
      const reply = await server.request("POST", "/api/v1/users", {
        body: {
          username,
          name: opts.name ?? `Person ${n}`,
          password,
          email: opts.email,
          isAdmin: opts.admin,
        },
      });
      expect(reply.status, reply.text).toBe(200);
      return { id: reply.body.id as string, username, password };
    },
    async signIn(username, password) {
      const reply = await server.request("POST", "/account/login", {
        token: null,
        body: { username, password },
      });
      expect(reply.status, reply.text).toBe(200);
      const sid = sessionOf(reply);
      expect(sid, "a session cookie").toBeDefined();
      return sid!;
    },
    asSession(sid, method, path, opts = {}) {
      const headers: Record<string, string> = { cookie: `sid=${sid}` };
      const origin = opts.origin === undefined ? server.origin : opts.origin;
      if (origin !== null) headers.origin = origin;
      return server.request(method, path, { token: null, body: opts.body, headers });
    },
    async page(method, path, opts = {}) {
      const headers: Record<string, string> = { accept: "text/html" };
      if (opts.sid) headers.cookie = `sid=${opts.sid}`;
      let body: string | undefined;
      if (method === "POST") {
        const origin = opts.origin === undefined ? server.origin : opts.origin;
        if (origin !== null) headers.origin = origin;
        headers["content-type"] = "application/x-www-form-urlencoded";
        const params = new URLSearchParams();
        for (const [key, value] of Object.entries(opts.form ?? {})) {
          for (const item of [value].flat()) params.append(key, item);
        }
        body = params.toString();
      }
      const response = await fetch(url + path, { method, headers, body, redirect: "manual" });
      return {
        status: response.status,
        location: response.headers.get("location"),
        html: await response.text(),
        headers: response.headers,
      };
    },
    async roleOf(teamId, userId) {
      const row = await db
        .selectFrom("team_members")
        .select("role")
        .where("team_id", "=", teamId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return row?.role;
    },
    async user(opts = {}) {
      const user = await insertUser(db, {
        username: opts.username ?? `user${++userCounter}-${Math.random().toString(36).slice(2, 8)}`,
        name: "Test User",
        admin: opts.admin ?? false,
      });
      for (const team of opts.teams ?? []) {
        await addMember(db, { teamId: team.id, userId: user.id, role: team.role });
      }
      const token = generateToken("personalAccessToken");
      const row = await insertToken(db, {
        userId: user.id,
        parentId: null,
        name: "test",
        digest: tokenDigest(TOKEN_SECRET, token),
        scope: {
          readOnly: false,
          adminOptIn: false,
          teamIds: null,
          expiresAt: null,
          ...opts.scope,
        },
      });
      return { id: user.id, token, tokenId: row.id };
    },
    async close() {
      // Replies to every client (the CLI, Chromium, a generated client, a bare fetch) held to
      // the document: what the harness's own client did not already report.
      const problems = watch.takeProblems();
      await app.close();
      if (!options.db) await testDb.drop();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      expect(problems, "replies that the served document does not describe").toEqual([]);
    },
  };
  return server;
}
