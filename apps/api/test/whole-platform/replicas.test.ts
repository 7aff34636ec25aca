// Several API processes share one database: revocation, suspension and deletion must hold on the
// very next request, whichever replica serves it. Each replica has its own connection pool (on PostgreSQL).
import { createDb, type Db } from "@flowplane/db";
import { testServerUrl } from "@flowplane/db/testing";
import { sql } from "kysely";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildApp } from "../../src/index";
import { startServer, TOKEN_SECRET, type TestServer } from "../support/harness";

let first: TestServer;
let secondDb: Db;
let secondUrl: string;
let second: FastifyInstance;
let closeSecond: () => Promise<void>;

beforeAll(async () => {
  first = await startServer();
  // PGlite is one in-process database; PostgreSQL gets a pool of its own, as another process would.
  secondDb =
    first.testDb.config.kind === "postgres" ? await createDb(first.testDb.config) : first.db;
  second = await buildApp({ db: secondDb, tokenSecret: TOKEN_SECRET, baseUrl: "http://x" });
  await second.listen({ host: "127.0.0.1", port: 0 });
  const address = second.server.address() as { port: number };
  secondUrl = `http://127.0.0.1:${address.port}`;
  closeSecond = async () => {
    await second.close();
    if (secondDb !== first.db) await secondDb.destroy();
  };
});
afterAll(async () => {
  await closeSecond();
  await first.close();
});

test("a token revoked through one replica is refused by the other on the next request", async () => {
  const user = await first.user();
  for (let round = 0; round < 5; round++) {
    const created = await first.request("POST", "/api/v1/user/tokens", {
      token: user.token,
      body: { name: `round ${round}` },
    });
    const token = created.body.token as string;
    const before = await fetch(`${secondUrl}/api/v1/user`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(before.status).toBe(200);
    const revoked = await first.request("DELETE", `/api/v1/user/tokens/${created.body.id}`, {
      token: user.token,
    });
    expect(revoked.status).toBe(204);
    const after = await fetch(`${secondUrl}/api/v1/user`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(401);
  }
});

test("a user suspended or deleted through one replica is refused by the other on the next request", async () => {
  const created = await first.request("POST", "/api/v1/users", {
    body: { username: "replicated", name: "R", password: "a long secret phrase" },
  });
  const userId = created.body.id as string;
  const login = await fetch(`${secondUrl}/account/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "replicated", password: "a long secret phrase" }),
  });
  expect(login.status).toBe(200);
  const cookie = login.headers.getSetCookie()[0]!.split(";")[0]!;
  const created2 = await fetch(`${secondUrl}/api/v1/user/tokens`, {
    method: "POST",
    headers: { cookie, origin: "http://x", "content-type": "application/json" },
    body: JSON.stringify({ name: "replicated" }),
  });
  expect(created2.status).toBe(200);
  const value = ((await created2.json()) as { token: string }).token;
  const asUser = (headers: Record<string, string>) =>
    fetch(`${secondUrl}/api/v1/user`, { headers }).then((r) => r.status);
  expect(await asUser({ authorization: `Bearer ${value}` })).toBe(200);
  expect(await asUser({ cookie })).toBe(200);

  await first.request("PUT", `/api/v1/users/${userId}`, { body: { suspended: true } });
  expect(await asUser({ authorization: `Bearer ${value}` })).toBe(401);
  expect(await asUser({ cookie })).toBe(401);

  await first.request("PUT", `/api/v1/users/${userId}`, { body: { suspended: false } });
  expect(await asUser({ authorization: `Bearer ${value}` })).toBe(200);
  await first.request("DELETE", `/api/v1/users/${userId}`);
  expect(await asUser({ authorization: `Bearer ${value}` })).toBe(401);
});

/** A request to the second replica, as a script sends it. */
async function onSecond(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${secondUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Only PostgreSQL keeps answers (PGlite has no access feed). */
const onPostgres = testServerUrl !== undefined;

test("a token's answers are used again, and a change through the other replica holds on the very next request", async () => {
  const owner = await first.user();
  const created = await first.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: "Kept" },
  });
  const teamId = created.body.id as string;
  const member = await first.user({ teams: [{ id: teamId, role: 30 }] });
  await second.authenticator.ready();
  const { counts } = second.authenticator;
  // The setup's own changes heard first: a notification arriving during the next query would
  // (rightly) keep its answer from being kept.
  await second.authenticator.feed?.barrier();

  // The second request of the same token to the same route is answered from what was kept.
  expect((await onSecond("GET", `/api/v1/teams/${teamId}`, member.token)).status).toBe(200);
  const kept = counts.kept;
  expect((await onSecond("GET", `/api/v1/teams/${teamId}`, member.token)).body.name).toBe("Kept");
  expect((await onSecond("GET", "/api/v1/user/teams", member.token)).status).toBe(200);
  expect((await onSecond("GET", "/api/v1/user/teams", member.token)).body.teams).toMatchObject([
    { id: teamId, name: "Kept", role: 30, memberCount: 2 },
  ]);
  expect(counts.kept).toBe(onPostgres ? kept + 2 : 0);

  // A rename: the team's own data, read with the token, is the new one at once.
  await first.request("PUT", `/api/v1/teams/${teamId}`, {
    token: owner.token,
    body: { name: "Renamed" },
  });
  expect((await onSecond("GET", `/api/v1/teams/${teamId}`, member.token)).body.name).toBe(
    "Renamed",
  );

  // A role raised: the next write through the other replica is allowed; lowered: refused.
  expect(
    (await onSecond("PUT", `/api/v1/teams/${teamId}`, member.token, { name: "By member" })).status,
  ).toBe(403);
  await first.request("PUT", `/api/v1/teams/${teamId}/members/${member.id}`, {
    token: owner.token,
    body: { role: 50 },
  });
  expect(
    (await onSecond("PUT", `/api/v1/teams/${teamId}`, member.token, { name: "By member" })).status,
  ).toBe(200);
  expect((await onSecond("GET", "/api/v1/user/teams", member.token)).body.teams).toMatchObject([
    { id: teamId, name: "By member", role: 50 },
  ]);
  await first.request("PUT", `/api/v1/teams/${teamId}/members/${member.id}`, {
    token: owner.token,
    body: { role: 30 },
  });
  expect(
    (await onSecond("PUT", `/api/v1/teams/${teamId}`, member.token, { name: "Again" })).status,
  ).toBe(403);

  // The token made read-only through the first replica: the second refuses its next write.
  await first.request("PUT", `/api/v1/teams/${teamId}/members/${member.id}`, {
    token: owner.token,
    body: { role: 50 },
  });
  await first.request("PUT", `/api/v1/user/tokens/${member.tokenId}`, {
    token: member.token,
    body: { readOnly: true },
  });
  expect(
    (await onSecond("PUT", `/api/v1/teams/${teamId}`, member.token, { name: "Read only" })).status,
  ).toBe(403);

  // Removed from the team: 404 there, and gone from the list, on the next request.
  expect((await onSecond("GET", `/api/v1/teams/${teamId}`, member.token)).status).toBe(200);
  await first.request("DELETE", `/api/v1/teams/${teamId}/members/${member.id}`, {
    token: owner.token,
  });
  expect((await onSecond("GET", `/api/v1/teams/${teamId}`, member.token)).status).toBe(404);
  expect((await onSecond("GET", "/api/v1/user/teams", member.token)).body.count).toBe(0);
});

test.runIf(onPostgres)(
  "while the access feed is down nothing kept is used, and it comes back by itself",
  async () => {
    const user = await first.user();
    const other = await first.user();
    const feed = second.authenticator.feed!;
    await feed.ready();
    for (const { token } of [user, other]) {
      expect((await onSecond("GET", "/api/v1/user", token)).status).toBe(200);
      expect((await onSecond("GET", "/api/v1/user", token)).status).toBe(200);
    }
    const lost = new Promise<void>((resolve) => feed.onChange(() => !feed.live && resolve()));
    await sql`select pg_terminate_backend(${feed.backendPid!})`.execute(first.db);
    // Revoked while the feed may not have noticed yet, or is reconnecting: refused all the same.
    await first.request("DELETE", `/api/v1/user/tokens/${user.tokenId}`, { token: user.token });
    expect((await onSecond("GET", "/api/v1/user", user.token)).status).toBe(401);
    await lost;
    // Down, or back with nothing kept: either way the next request asks the database.
    const queried = second.authenticator.counts.queried;
    expect((await onSecond("GET", "/api/v1/user", other.token)).status).toBe(200);
    expect(second.authenticator.counts.queried).toBe(queried + 1);

    await feed.ready();
    await feed.barrier();
    const kept = second.authenticator.counts.kept;
    expect((await onSecond("GET", "/api/v1/user", other.token)).status).toBe(200);
    expect((await onSecond("GET", "/api/v1/user", other.token)).status).toBe(200);
    expect(second.authenticator.counts.kept).toBe(kept + 1);
  },
);
