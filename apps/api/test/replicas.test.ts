// Several API processes share one database: revocation, suspension and deletion must hold on the
// very next request, whichever replica serves it. Each replica has its own connection pool (on PostgreSQL).
import { createDb, type Db } from "@flowplane/db";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildApp } from "../src/index";
import { startServer, TOKEN_SECRET, type TestServer } from "./harness";

let first: TestServer;
let secondDb: Db;
let secondUrl: string;
let closeSecond: () => Promise<void>;

beforeAll(async () => {
  first = await startServer();
  // PGlite is one in-process database; PostgreSQL gets a pool of its own, as another process would.
  secondDb =
    first.testDb.config.kind === "postgres" ? await createDb(first.testDb.config) : first.db;
  const second = await buildApp({ db: secondDb, tokenSecret: TOKEN_SECRET, baseUrl: "http://x" });
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
