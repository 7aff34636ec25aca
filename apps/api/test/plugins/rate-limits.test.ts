// Rate limits: always on where guessing is the threat (failed sign-ins per username, sign-in
// attempts per address, wrong current passwords per user), FlowFuse's others only when enabled
// (per route, and a global limit per token or session). Refusals are 429 in our envelope (tRPC's on
// /trpc) with Retry-After; with Redis, servers share their counts.
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { createTestDb } from "@flowplane/db/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildApp } from "../../src/index";
import { inCI } from "../support/env";
import {
  freePort,
  type Reply,
  startServer,
  TOKEN_SECRET,
  type TestServer,
} from "../support/harness";

const ORIGIN = "http://127.0.0.1:3000";
const REDIS_URL = "redis://127.0.0.1:6379";

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

async function serve(options: Parameters<typeof startServer>[0] = {}) {
  const server = await startServer(options);
  servers.push(server);
  return server;
}

const signIn = (server: TestServer, username: string, password: string) =>
  server.request("POST", "/account/login", { token: null, body: { username, password } });

/** A sign-in at any server's URL (the harness's client knows only its own server). */
async function signInAt(url: string, username: string, password: string): Promise<Reply> {
  const response = await fetch(`${url}/account/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}

/** The same sign-in from another loopback address (127.0.0.2). */
function signInFrom(
  localAddress: string,
  server: TestServer,
  username: string,
  password: string,
): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ username, password });
    const request = httpRequest(
      `${server.url}/account/login`,
      { method: "POST", localAddress, headers: { "content-type": "application/json" } },
      (response) => {
        response.resume();
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            retryAfter: response.headers["retry-after"] as string | undefined,
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** A 429 in our envelope, with a Retry-After of at most `windowSeconds`. */
function expectTooMany(reply: Reply, windowSeconds: number) {
  expect(reply.status, reply.text).toBe(429);
  expect(reply.body).toEqual({
    code: "too_many_requests",
    error: expect.stringMatching(/^Too many .*; retry in \d+ s$/),
    requestId: expect.any(String),
  });
  const retryAfter = Number(reply.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
}

/** A tRPC call over plain HTTP: a mutation is POSTed, a query is a GET. */
async function trpc(server: TestServer, token: string, path: string, input?: unknown) {
  const response = await fetch(`${server.url}/trpc/${path}`, {
    method: input === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: input === undefined ? undefined : JSON.stringify(input),
  });
  const body = (await response.json()) as Reply["body"];
  return { status: response.status, headers: response.headers, body };
}

describe("sign-in, always limited", () => {
  // Started before the tests: password hashing is slow by design, and takes the tests' time.
  let roomy: TestServer;
  let defaults: TestServer;
  let twoFailures: TestServer;
  let sixPerAddress: TestServer;
  let threeChecks: TestServer;
  beforeAll(async () => {
    // FlowFuse's 5 per username, with room per address for the parallel burst.
    roomy = await serve({ rateLimits: { signInAddress: { max: 100, windowMs: 30_000 } } });
    defaults = await serve();
    // A short window, so that its end can be waited for.
    twoFailures = await serve({ rateLimits: { signIn: { max: 2, windowMs: 5000 } } });
    sixPerAddress = await serve({ rateLimits: { signInAddress: { max: 6, windowMs: 30_000 } } });
    threeChecks = await serve({ rateLimits: { signInChecks: { max: 3, windowMs: 60_000 } } });
  });

  test("after five failed sign-ins a wrong password is 429, the right one still signs in; other usernames are not affected", async () => {
    const server = roomy;
    const alice = await server.userWithPassword();
    const bob = await server.userWithPassword();
    for (let i = 0; i < 5; i++) {
      expect((await signIn(server, alice.username, "not the password")).status).toBe(401);
    }
    expectTooMany(await signIn(server, alice.username, "still not it"), 30);
    // The count is the username's, however it is written.
    expectTooMany(await signIn(server, alice.username.toUpperCase(), "nor this"), 30);
    expect((await signIn(server, alice.username, alice.password)).status).toBe(200);
    expect((await signIn(server, bob.username, bob.password)).status).toBe(200);
  });

  test("a user is counted once whether they type the username or the email", async () => {
    const server = roomy;
    const frank = await server.userWithPassword({ email: "frank@example.com" });
    // Three failures by username and two by email (in another case) are five for one account.
    for (let i = 0; i < 3; i++) {
      expect((await signIn(server, frank.username, "not the password")).status).toBe(401);
    }
    for (let i = 0; i < 2; i++) {
      expect((await signIn(server, "Frank@Example.com", "not the password")).status).toBe(401);
    }
    expectTooMany(await signIn(server, frank.username, "a sixth guess"), 30);
    expectTooMany(await signIn(server, "frank@example.com", "a seventh guess"), 30);
    // The sign-in page counts the same account, and lets the right password in.
    const form = await server.page("POST", "/sign-in", {
      form: { username: "frank@example.com", password: "an eighth guess" },
    });
    expect(form.status).toBe(429);
    const right = await server.page("POST", "/sign-in", {
      form: { username: "frank@example.com", password: frank.password },
    });
    expect(right.status).toBe(303);
  });

  test("thirty failed sign-ins for one account from an address lock no one out: the right passwords sign in, wrong ones are 429", async () => {
    // Issue 32: any flow (every instance calls from 127.0.0.1) locked every loopback user out.
    const server = defaults;
    const alice = await server.userWithPassword();
    const bob = await server.userWithPassword();
    const statuses = [];
    for (let i = 0; i < 31; i++) {
      statuses.push((await signIn(server, alice.username, `guess ${i}`)).status);
    }
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(26).fill(429)]);
    expect((await signIn(server, bob.username, bob.password)).status).toBe(200);
    expect((await signIn(server, alice.username, alice.password)).status).toBe(200);
    // The address is past its failures: a wrong password for anyone from it is 429.
    expectTooMany(await signIn(server, bob.username, "not the password"), 30);
    expectTooMany(await signIn(server, "nobody-at-all", "not the password"), 30);
    // The sign-in page too.
    const form = await server.page("POST", "/sign-in", {
      form: { username: bob.username, password: bob.password },
    });
    expect(form.status).toBe(303);
  });

  test("signing in successfully is not counted", async () => {
    const server = twoFailures;
    const amy = await server.userWithPassword();
    for (let i = 0; i < 3; i++) {
      expect((await signIn(server, amy.username, amy.password)).status).toBe(200);
    }
    for (let i = 0; i < 2; i++) {
      expect((await signIn(server, amy.username, "not the password")).status).toBe(401);
    }
    expectTooMany(await signIn(server, amy.username, "not the password"), 5);
  });

  test("parallel guesses for one username cannot all pass the check before the first failure counts", async () => {
    const server = roomy;
    const carol = await server.userWithPassword();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signIn(server, carol.username, `guess number ${i}`)),
    );
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
  });

  test("failures per client address have a higher bound of their own", async () => {
    const server = sixPerAddress;
    const dave = await server.userWithPassword();
    // Six different usernames, one failure each: under the per-username limit, at the address's.
    for (let i = 0; i < 6; i++) {
      expect((await signIn(server, `nobody-${i}`, "a guessed password")).status).toBe(401);
    }
    expectTooMany(await signIn(server, dave.username, "a guessed password"), 30);
    expect((await signIn(server, dave.username, dave.password)).status).toBe(200);
    // Another client address (another loopback one) has its own count.
    expect(
      await signInFrom("127.0.0.2", server, dave.username, "a guessed password"),
    ).toMatchObject({ status: 401 });
  });

  test("password checks per client address are bounded: past them even the right password is 429 (Retry-After), other addresses unaffected", async () => {
    const server = threeChecks;
    const eve = await server.userWithPassword();
    for (let i = 0; i < 3; i++) {
      expect((await signIn(server, eve.username, eve.password)).status).toBe(200);
    }
    expectTooMany(await signIn(server, eve.username, eve.password), 60);
    expect(await signInFrom("127.0.0.2", server, eve.username, eve.password)).toMatchObject({
      status: 200,
    });
  });

  test("the count ends with its window", async () => {
    const server = twoFailures;
    const erin = await server.userWithPassword();
    for (let i = 0; i < 2; i++) {
      expect((await signIn(server, erin.username, "not the password")).status).toBe(401);
    }
    const refused = await signIn(server, erin.username, "not the password");
    expectTooMany(refused, 5);
    // Retry-After is whole seconds, rounded up: the window has ended once it has passed.
    await new Promise((resolve) =>
      setTimeout(resolve, Number(refused.headers.get("retry-after")) * 1000 + 50),
    );
    expect((await signIn(server, erin.username, "not the password")).status).toBe(401);
  });
});

describe("password changes, always limited", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await serve();
  });

  test("five wrong current passwords per user in 30 s, counted the same through REST (session or token) and /trpc", async () => {
    const frank = await server.userWithPassword();
    const grace = await server.userWithPassword();
    const sid = await server.signIn(frank.username, frank.password);
    const created = await server.asSession(sid, "POST", "/api/v1/user/tokens", {
      body: { name: "cli" },
    });
    expect(created.status, created.text).toBe(200);
    const token = created.body.token as string;
    const wrong = { old_password: "not the password", password: "a brand new secret" };
    // Refused before the password is checked: no guess, not counted.
    for (let i = 0; i < 6; i++) {
      const reply = await server.asSession(sid, "PUT", "/api/v1/user/change_password", {
        body: { old_password: "not the password", password: 12345 },
      });
      expect(reply.body.code).toBe("invalid_request");
    }

    for (let i = 0; i < 3; i++) {
      const reply = await server.asSession(sid, "PUT", "/api/v1/user/change_password", {
        body: wrong,
      });
      expect(reply.body.code).toBe("password_change_failed");
    }
    const rest = await server.request("PUT", "/api/v1/user/change_password", {
      token,
      body: wrong,
    });
    expect(rest.body.code).toBe("password_change_failed");
    const viaTrpc = await trpc(server, token, "user.changePassword", wrong);
    expect(viaTrpc.body.error.data).toMatchObject({ code: "password_change_failed" });

    // The sixth, even with the right password.
    const right = { old_password: frank.password, password: "a brand new secret" };
    expectTooMany(
      await server.asSession(sid, "PUT", "/api/v1/user/change_password", { body: right }),
      30,
    );
    const refused = await trpc(server, token, "user.changePassword", right);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.body.error.data).toMatchObject({ code: "too_many_requests", httpStatus: 429 });

    // Another user's count is their own.
    const graceSid = await server.signIn(grace.username, grace.password);
    const changed = await server.asSession(graceSid, "PUT", "/api/v1/user/change_password", {
      body: { old_password: grace.password, password: "another brand new secret" },
    });
    expect(changed.status, changed.text).toBe(200);
  });
});

describe("FlowFuse's optional limits", () => {
  let off: TestServer;
  let on: TestServer;
  let globalFour: TestServer;
  beforeAll(async () => {
    off = await serve();
    on = await serve({ rateLimits: { enabled: true } });
    globalFour = await serve({
      rateLimits: { enabled: true, global: { max: 4, windowMs: 30_000 } },
    });
  });

  test("are off by default: 50 tokens created in a burst all succeed, and only always-on limits are documented", async () => {
    const server = off;
    const user = await server.user();
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        server.request("POST", "/api/v1/user/tokens", {
          token: user.token,
          body: { name: `t${i}` },
        }),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(50).fill(200));
    expect(replies.some((reply) => reply.headers.has("x-ratelimit-limit"))).toBe(false);

    const paths = server.document.paths;
    expect(paths["/api/v1/user/tokens"]!.post!.responses["429"]).toBeUndefined();
    expect(paths["/api/v1/user/change_password"]!.put!.responses["429"]).toMatchObject({
      headers: { "Retry-After": { schema: { type: "integer" } } },
    });
  });

  test("on: the sixth token or profile change in 30 s is 429, each counted apart and per user", async () => {
    const server = on;
    const user = await server.user();
    const other = await server.user();
    for (let i = 0; i < 5; i++) {
      const reply = await server.request("POST", "/api/v1/user/tokens", {
        token: user.token,
        body: { name: `t${i}` },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    expectTooMany(
      await server.request("POST", "/api/v1/user/tokens", {
        token: user.token,
        body: { name: "6" },
      }),
      30,
    );
    for (let i = 0; i < 5; i++) {
      const reply = await server.request("PUT", "/api/v1/user", {
        token: user.token,
        body: { name: `Name ${i}` },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    expectTooMany(
      await server.request("PUT", "/api/v1/user", { token: user.token, body: { name: "Six" } }),
      30,
    );
    const others = await server.request("POST", "/api/v1/user/tokens", {
      token: other.token,
      body: { name: "mine" },
    });
    expect(others.status, others.text).toBe(200);

    // Probing instance names (an owner of a team may): FlowFuse limits it too.
    const team = await server.request("POST", "/api/v1/teams", {
      token: other.token,
      body: { name: "Probe" },
    });
    expect(team.status, team.text).toBe(200);
    for (let i = 0; i < 5; i++) {
      const reply = await server.request("POST", "/api/v1/projects/check-name", {
        token: other.token,
        body: { name: `free-${i}` },
      });
      expect(reply.status, reply.text).toBe(200);
    }
    expectTooMany(
      await server.request("POST", "/api/v1/projects/check-name", {
        token: other.token,
        body: { name: "free-6" },
      }),
      30,
    );

    // With the global limit on, any operation can be refused, and the document says so; but the
    // agent's calls with its device's token, which are never counted.
    for (const methods of Object.values(server.document.paths)) {
      for (const operation of Object.values(methods)) {
        const security = (operation as { security?: Record<string, unknown>[] }).security;
        // The agent's calls, and a device's flows' reports to a rollout: never counted.
        const agent =
          security?.some((scheme) => "deviceToken" in scheme || "rolloutHealthToken" in scheme) ??
          false;
        expect(operation.responses["429"] === undefined).toBe(agent);
      }
    }
  });

  test("the global limit counts per token or session, not per address; anonymous requests per address", async () => {
    const server = globalFour;
    const user = await server.user();
    const second = await server.request("POST", "/api/v1/user/tokens", {
      token: user.token,
      body: { name: "second" },
    });
    expect(second.status, second.text).toBe(200);
    const tokens = [user.token, second.body.token as string];

    // Two tokens of one user, from one address: a budget each.
    for (const [token, used] of [
      [tokens[0]!, 1],
      [tokens[1]!, 0],
    ] as const) {
      for (let i = used; i < 4; i++) {
        const reply = await server.request("GET", "/api/v1/user", { token });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("x-ratelimit-remaining")).toBe(String(3 - i));
      }
      expectTooMany(await server.request("GET", "/api/v1/user", { token }), 30);
    }

    // /trpc is counted per token too.
    const refused = await trpc(server, tokens[0]!, "user.me");
    expect(refused.status).toBe(429);
    expect(refused.body.error.data).toMatchObject({ code: "too_many_requests", httpStatus: 429 });
    const fresh = await server.user();
    expect((await trpc(server, fresh.token, "user.me")).status).toBe(200);

    // Without a token or session: the client address.
    for (let i = 0; i < 4; i++) {
      expect((await server.request("POST", "/account/logout", { token: null })).status).toBe(200);
    }
    expectTooMany(await server.request("POST", "/account/logout", { token: null }), 30);

    // Health checks are never limited.
    for (let i = 0; i < 6; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

test("a REDIS_URL nothing answers at stops the start, naming the variable", async () => {
  const testDb = await createTestDb();
  try {
    const started = buildApp({
      db: testDb.db,
      tokenSecret: TOKEN_SECRET,
      baseUrl: ORIGIN,
      rateLimits: { redisUrl: `redis://127.0.0.1:${await freePort()}` },
    });
    await expect(started).rejects.toThrow(/^REDIS_URL: cannot connect to Redis/);
  } finally {
    await testDb.drop();
  }
});

/** Whether something listens on Redis's port here. */
const redisListening = await new Promise<boolean>((resolve) => {
  const socket = connect({ host: "127.0.0.1", port: 6379 });
  socket.setTimeout(500);
  socket.on("connect", () => {
    socket.destroy();
    resolve(true);
  });
  socket.on("timeout", () => {
    socket.destroy();
    resolve(false);
  });
  socket.on("error", () => resolve(false));
});

// In CI a Redis server runs, and a missing one must fail the test rather than skip it.
describe.skipIf(!redisListening && !inCI)("with Redis", () => {
  test("servers share their counts: after five failed sign-ins across two, a wrong password is 429 on either", async () => {
    const nameSpace = `flowplane-test-${randomUUID()}-`;
    const rateLimits = { redisUrl: REDIS_URL, nameSpace };
    const first = await serve({ rateLimits });
    const second = await buildApp({
      db: first.db,
      tokenSecret: TOKEN_SECRET,
      baseUrl: ORIGIN,
      rateLimits,
    });
    await second.listen({ host: "127.0.0.1", port: 0 });
    const urls = [
      first.url,
      `http://127.0.0.1:${(second.server.address() as { port: number }).port}`,
    ];
    const redis = new Redis(REDIS_URL);
    try {
      const henry = await first.userWithPassword();
      const ivy = await first.userWithPassword();
      for (const url of [urls[0]!, urls[1]!, urls[0]!, urls[1]!, urls[0]!]) {
        expect((await signInAt(url, henry.username, "not the password")).status).toBe(401);
      }
      for (const url of urls)
        expectTooMany(await signInAt(url, henry.username, "not the password"), 30);
      expect((await signInAt(urls[0]!, henry.username, henry.password)).status).toBe(200);
      expect((await signInAt(urls[1]!, ivy.username, ivy.password)).status).toBe(200);
      // The counts are in Redis, under this run's prefix.
      expect((await redis.keys(`${nameSpace}*`)).length).toBeGreaterThan(0);
    } finally {
      await second.close();
      const keys = await redis.keys(`${nameSpace}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
