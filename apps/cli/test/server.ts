// The real API server for the CLI's tests: a fresh database, the first administrator and its token,
// listening on a free loopback port. The server knows its own URL (BASE_URL), as a deployed one
// does: a signed-in write must come with that origin, which `login --username` sends.
import {
  acceptInstanceConnection,
  buildApp,
  ensureInitialAdmin,
  INITIAL_PASSWORD_FILE,
  INITIAL_TOKEN_FILE,
} from "@flowplane/api";
import { type OpenApiDocument, watchReplies } from "@flowplane/api/testing";
import type { Db } from "@flowplane/db";
import { createTestDb } from "@flowplane/db/testing";
import { LocalDriver } from "@flowplane/runtime";
import { afterAll, beforeAll, expect } from "vitest";
import { newUser, type User } from "./cli";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestServer {
  /** Where it listens, and (unless `publicUrl` was given) its BASE_URL. */
  url: string;
  /** Its database, to check what the API does not show (sessions). */
  db: Db;
  /** The administrator's first token (admin opt-in, every team, no expiry). */
  adminToken: string;
  /** The administrator's first password, marked expired: a sign-in must choose a new one. */
  adminPassword: string;
  close(): Promise<void>;
}

export async function startServer(
  options: {
    /** BASE_URL, as a server behind a proxy whose public URL differs from where it listens. */
    publicUrl?: string;
    /** The embedded MQTT broker, on a free loopback port. */
    broker?: boolean;
    /** Hosted instances, run as real Node-RED processes by the local driver. */
    instances?: boolean;
  } = {},
): Promise<TestServer> {
  const { db, drop } = await createTestDb();
  const dataDir = await mkdtemp(join(tmpdir(), "flowplane-cli-server-"));
  const secret = "x".repeat(40);
  await ensureInitialAdmin(db, secret, dataDir);
  const adminToken = (await readFile(join(dataDir, INITIAL_TOKEN_FILE), "utf8")).trim();
  const adminPassword = (await readFile(join(dataDir, INITIAL_PASSWORD_FILE), "utf8")).trim();
  // The port is chosen before the server is built, since its BASE_URL names it. Another process
  // may take it in between: then try another.
  const appOf: { app?: Awaited<ReturnType<typeof buildApp>> } = {};
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const app = await buildApp({
      db,
      tokenSecret: secret,
      baseUrl: options.publicUrl ?? url,
      ...(options.broker && {
        broker: { mode: "embedded", host: "127.0.0.1", port: 0, dataDir } as const,
      }),
      ...(options.instances && {
        instances: {
          driver: new LocalDriver({
            root: join(dataDir, "instances"),
            // Instances reach the platform through the sockets the driver hands them.
            platformConnection: (id, socket) =>
              acceptInstanceConnection(appOf.app?.server, id, socket),
          }),
        },
      }),
    });
    appOf.app = app;
    // Every reply the CLI gets is held to the served document (@flowplane/api/testing).
    const watch = watchReplies(app);
    try {
      await app.listen({ host: "127.0.0.1", port });
    } catch (error) {
      await app.close();
      if ((error as NodeJS.ErrnoException).code === "EADDRINUSE" && attempt < 5) continue;
      throw error;
    }
    const served = await fetch(`${url}/api/json`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    watch.useDocument((await served.json()) as OpenApiDocument);
    return {
      url,
      db,
      adminToken,
      adminPassword,
      async close() {
        const problems = watch.takeProblems();
        await app.close();
        await drop();
        await rm(dataDir, { recursive: true, force: true });
        if (problems.length > 0) {
          throw new Error(`Replies the served document does not describe:\n${problems.join("\n")}`);
        }
      },
    };
  }
}

/**
 * A server (as `startServer`) and its administrator: a CLI user logged in with the first token, in
 * a config directory of their own.
 */
export async function startServerWithAdmin(
  options: Parameters<typeof startServer>[0] = {},
): Promise<{ server: TestServer; admin: User }> {
  const server = await startServer(options);
  const admin = await newUser();
  await admin.flowplane("login", "--token", server.adminToken, "--url", server.url);
  return { server, admin };
}

/**
 * A server and its administrator (`startServerWithAdmin`) for a test file: started before its
 * tests, handed to `started`, and closed after them (after the file's own `afterAll` hooks).
 */
export function serveWithAdmin(
  started: (served: { server: TestServer; admin: User }) => void,
  options: Parameters<typeof startServer>[0] = {},
): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    const served = await startServerWithAdmin(options);
    server = served.server;
    started(served);
  });
  afterAll(async () => {
    await server?.close();
  });
}

/** As `user`, a team (`name`, its slug `slug`) with an application named Line. */
export async function createTeamWithLine(user: User, name: string, slug: string): Promise<void> {
  expect((await user.flowplane("teams", "create", name, "--slug", slug)).status).toBe(0);
  expect((await user.flowplane("apps", "create", "Line", "--team", slug)).status).toBe(0);
}

/** As `user`, an instance of the team's application Line, once it runs. */
export async function createRunningInstance(user: User, name: string, team: string): Promise<void> {
  const created = await user.flowplane(
    ...["instances", "create", name, "--app", "Line", "--team", team, "--wait"],
  );
  expect(created.status, created.stderr).toBe(0);
}

/** A request of the API as the administrator (its first token), which must succeed; its JSON body. */
export async function adminApi(server: TestServer, method: string, path: string, body?: unknown) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      authorization: `Bearer ${server.adminToken}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as any;
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A loopback URL nothing listens on. */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
