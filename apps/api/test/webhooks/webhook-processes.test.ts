// Webhooks across processes and restarts: the queue lives in the database, so deliveries pending
// when a platform stops are sent by the next one on that database; a host refused when a delivery
// is due is not called (the check is made again at each delivery); and two API processes on one
// PostgreSQL deliver each event once.
import { createDb, type Db } from "@flowplane/db";
import { createTestDb, type TestDb, testServerUrl } from "@flowplane/db/testing";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, test } from "vitest";
import { type AppOptions, buildApp } from "../../src/index";
import { startServer, TOKEN_SECRET, type TestServer } from "../support/harness";
import { createTeam, makeUser, type TestTeam } from "../support/team-fixtures";
import { waiter } from "../support/until";
import { startReceiver } from "./receiver";

const until = waiter(30_000, 50);
// A generous timeout: a loaded machine answering late would count as a failed attempt.
const FAST = { tickMs: 100, backoffMs: 50, timeoutMs: 10_000 };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Another API process on the same database (its own pool on PostgreSQL), as replicas.test.ts. */
async function anotherProcess(
  testDb: TestDb,
  options: Partial<AppOptions>,
): Promise<{ url: string; app: FastifyInstance }> {
  const db: Db = testDb.config.kind === "postgres" ? await createDb(testDb.config) : testDb.db;
  const app = await buildApp({ db, tokenSecret: TOKEN_SECRET, baseUrl: "http://x", ...options });
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanup.push(async () => {
    await app.close();
    if (db !== testDb.db) await db.destroy();
  });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, app };
}

async function call(url: string, token: string, method: string, path: string, body?: unknown) {
  const reply = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: reply.status, body: (await reply.json()) as Record<string, any> };
}

async function setUp(options: Parameters<typeof startServer>[0]) {
  const testDb = await createTestDb();
  cleanup.push(() => testDb.drop());
  const server = await startServer({ db: testDb, ...options });
  let closed = false;
  cleanup.push(async () => {
    if (!closed) await server.close();
  });
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  const receiver = await startReceiver();
  cleanup.push(() => receiver.close());
  const close = async () => {
    closed = true;
    await server.close();
  };
  return { testDb, server, owner, team, receiver, close };
}

async function createHook(server: TestServer, team: TestTeam, token: string, url: string) {
  const reply = await server.request("POST", `/api/v1/teams/${team.id}/webhooks`, {
    token,
    body: { url, eventTypes: ["team.settings.updated"] },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { id: string; secret: string };
}

const deliveriesPath = (team: TestTeam, hook: { id: string }) =>
  `/api/v1/teams/${team.id}/webhooks/${hook.id}/deliveries`;

describe("webhook deliveries across processes", () => {
  test("deliveries pending when the platform stops are sent by the next one", async () => {
    // A worker with no slot: deliveries are queued and never sent by this process.
    const first = await setUp({
      webhookAllowedHosts: ["127.0.0.1"],
      webhookDelivery: { ...FAST, concurrency: 0 },
    });
    const { server, owner, team, receiver } = first;
    const hook = await createHook(server, team, owner.token, receiver.url);
    for (let i = 0; i < 3; i++) {
      await server.request("PUT", `/api/v1/teams/${team.id}`, {
        token: owner.token,
        body: { name: `Before restart ${i}` },
      });
    }
    await until("three deliveries queued", async () => {
      const list = await server.request("GET", deliveriesPath(team, hook), { token: owner.token });
      return list.body.count === 3 ? true : undefined;
    });
    expect(receiver.received).toHaveLength(0);
    await first.close();

    const next = await anotherProcess(first.testDb, {
      webhookAllowedHosts: ["127.0.0.1"],
      webhookDelivery: FAST,
    });
    const list = await until("the three delivered after the restart", async () => {
      const reply = await call(next.url, owner.token, "GET", deliveriesPath(team, hook));
      const all = reply.body.deliveries as { status: string }[];
      return all.length === 3 && all.every((d) => d.status === "succeeded") ? all : undefined;
    });
    expect(list).toHaveLength(3);
    expect(receiver.received).toHaveLength(3);
  });

  test("a host refused when the delivery is due is not called", async () => {
    const first = await setUp({ webhookAllowedHosts: ["127.0.0.1"], webhookDelivery: FAST });
    const { server, owner, team, receiver } = first;
    const hook = await createHook(server, team, owner.token, receiver.url);
    await first.close();
    // The operator took the allowance away.
    const next = await anotherProcess(first.testDb, {
      webhookDelivery: { ...FAST, maxAttempts: 2 },
    });
    const renamed = await call(next.url, owner.token, "PUT", `/api/v1/teams/${team.id}`, {
      name: "No Longer Allowed",
    });
    expect(renamed.status).toBe(200);
    const failed = await until("the delivery failed", async () => {
      const reply = await call(next.url, owner.token, "GET", deliveriesPath(team, hook));
      const [one] = reply.body.deliveries as { status: string; attempts: { error: string }[] }[];
      return one?.status === "failed" ? one : undefined;
    });
    expect(failed.attempts).toHaveLength(2);
    expect(failed.attempts[0]!.error).toMatch(/^refused: .*127\.0\.0\.1.*not a public address/);
    expect(receiver.received).toHaveLength(0);
  });

  test.skipIf(!testServerUrl)(
    "two API processes on one PostgreSQL deliver each event once (skipped on PGlite: one process)",
    async () => {
      const first = await setUp({ webhookAllowedHosts: ["127.0.0.1"], webhookDelivery: FAST });
      const { server, owner, team, receiver } = first;
      const second = await anotherProcess(first.testDb, {
        webhookAllowedHosts: ["127.0.0.1"],
        webhookDelivery: FAST,
      });
      const hook = await createHook(server, team, owner.token, receiver.url);
      const renames = 30;
      await Promise.all(
        Array.from({ length: renames }, (_, i) =>
          i % 2 === 0
            ? server.request("PUT", `/api/v1/teams/${team.id}`, {
                token: owner.token,
                body: { name: `Both ${i}` },
              })
            : call(second.url, owner.token, "PUT", `/api/v1/teams/${team.id}`, {
                name: `Both ${i}`,
              }),
        ),
      );
      const all = await until("every delivery acknowledged", async () => {
        const reply = await server.request("GET", `${deliveriesPath(team, hook)}?limit=100`, {
          token: owner.token,
        });
        const list = reply.body.deliveries as { id: string; status: string; attempts: unknown[] }[];
        return list.length === renames && list.every((d) => d.status === "succeeded")
          ? list
          : undefined;
      });
      expect(all.every((d) => d.attempts.length === 1)).toBe(true);
      const ids = receiver.received.map((r) => r.headers["flowplane-delivery"]);
      expect(ids).toHaveLength(renames);
      expect(new Set(ids).size).toBe(renames);
      const events = receiver.received.map((r) => JSON.parse(r.body).id as string);
      expect(new Set(events).size).toBe(renames);
    },
  );
});
