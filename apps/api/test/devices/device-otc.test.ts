// A device set up with its one-time code, as the agent does it (`--otc <code> --ff-url <url>`):
// `POST /api/v1/devices` with the base64 of the code as the bearer and `{ setup: true, agentHost }`
// answers the device with new credentials (the old token dies), once; a used, expired or unknown
// code is 401; two setups at once: one wins. The code reaches nothing else. The real agent's
// setup is in device-agent.test.ts. Failed codes are limited per client address and overall:
// past either limit a setup is 429 with Retry-After, its code unchecked.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Reply, startServer, type TestServer } from "../support/harness";
import { createApplication, createTeam, makeUser } from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team } = await serverWithTeam();
afterAll(() => server.close());

interface Created {
  id: string;
  name: string;
  credentials: { token: string; credentialSecret: string; otc?: string };
}

async function createDevice(name = `pi-${Math.random().toString(36).slice(2, 7)}`) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name, team: team.id },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as Created;
}

/** The agent's bearer: the base64 of the code. */
const bearer = (code: string) => Buffer.from(code).toString("base64");

const setUp = (code: string, body: Record<string, unknown> = { setup: true, agentHost: "pi-7" }) =>
  server.request("POST", "/api/v1/devices", { token: bearer(code), body });

/**
 * A check-in as the agent sends it: "accepted" (200 in step, or 409 with what to run) when the
 * token is the device's, else its status (401).
 */
async function checkIn(id: string, token: string) {
  const response = await fetch(`${server.url}/api/v1/devices/${id}/live/state`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ state: "stopped", snapshot: null, settings: null }),
  });
  await response.text();
  return response.status === 200 || response.status === 409 ? "accepted" : response.status;
}

describe("the one-time code", () => {
  test("a new device's reply carries a code of four words; only its digest is kept", async () => {
    const device = await createDevice();
    expect(device.credentials.otc).toMatch(/^[a-z]{3,8}(-[a-z]{3,8}){3}$/);
    const row = await (server.db as any)
      .selectFrom("devices")
      .selectAll()
      .where("id", "=", device.id)
      .executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain(device.credentials.otc);
    expect(row.otc_digest).toEqual(expect.any(String));
    // It lasts a day.
    const lifetime = row.otc_expires_at.getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(23.9 * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000);
  });

  test("a provisioning token's device gets no code: the agent has its credentials already", async () => {
    const token = await server.request("POST", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
      body: { name: "line" },
    });
    const device = await server.request("POST", "/api/v1/devices", {
      token: token.body.token,
      body: { name: "auto", type: "Auto Provisioned", team: team.id },
    });
    expect(device.status, device.text).toBe(200);
    expect(device.body.credentials).not.toHaveProperty("otc");
  });
});

describe("setting a device up with its code", () => {
  test("answers the device with new credentials and the platform's version; the old token dies, the new one checks in", async () => {
    const device = await createDevice("line-3 pi");
    expect(await checkIn(device.id, device.credentials.token)).toBe("accepted");

    const reply = await setUp(device.credentials.otc!);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      id: device.id,
      name: "line-3 pi",
      team: { id: team.id, name: team.name },
      meta: { ffVersion: expect.any(String) },
    });
    const { credentials } = reply.body;
    expect(credentials.token).toMatch(/^fpd_[0-9A-Za-z]{36}$/);
    expect(credentials.token).not.toBe(device.credentials.token);
    expect(credentials.credentialSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(credentials.credentialSecret).not.toBe(device.credentials.credentialSecret);
    expect(credentials).not.toHaveProperty("otc");
    expect(credentials).not.toHaveProperty("broker");

    expect(await checkIn(device.id, device.credentials.token)).toBe(401);
    expect(await checkIn(device.id, credentials.token)).toBe("accepted");
  });

  test("a code works once: used, it is 401 as the agent expects", async () => {
    const device = await createDevice();
    expect((await setUp(device.credentials.otc!)).status).toBe(200);
    const again = await setUp(device.credentials.otc!);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ code: "unauthorized", error: "unauthorized" });
  });

  test("two setups with one code at once: exactly one gets credentials", async () => {
    const device = await createDevice();
    const replies = await Promise.all(
      Array.from({ length: 4 }, () => setUp(device.credentials.otc!)),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
    const winner = replies.find((r) => r.status === 200)!;
    expect(await checkIn(device.id, winner.body.credentials.token)).toBe("accepted");
  });

  test("an unknown code, a code of the wrong shape, an expired code: 401", async () => {
    expect((await setUp("abandon-ability-able-about")).status).toBe(401);
    expect((await setUp("not-a-code")).status).toBe(401);
    const device = await createDevice();
    await (server.db as any)
      .updateTable("devices")
      .set({ otc_expires_at: new Date(Date.now() - 1000) })
      .where("id", "=", device.id)
      .execute();
    expect((await setUp(device.credentials.otc!)).status).toBe(401);
    // Nothing changed: the device's token still works.
    expect(await checkIn(device.id, device.credentials.token)).toBe("accepted");
  });

  test("new credentials bring a new code; the old code stops working", async () => {
    const device = await createDevice();
    const regenerated = await server.request(
      "POST",
      `/api/v1/devices/${device.id}/generate_credentials`,
      { token: owner.token },
    );
    expect(regenerated.status, regenerated.text).toBe(200);
    expect(regenerated.body.otc).toMatch(/^[a-z]{3,8}(-[a-z]{3,8}){3}$/);
    expect(regenerated.body.otc).not.toBe(device.credentials.otc);
    expect((await setUp(device.credentials.otc!)).status).toBe(401);
    expect((await setUp(regenerated.body.otc)).status).toBe(200);
  });

  test("audited as new credentials, by the platform, with the agent's host", async () => {
    const device = await createDevice();
    await setUp(device.credentials.otc!, { setup: true, agentHost: "192.168.1.50" });
    const log = await server.request("GET", `/api/v1/devices/${device.id}/audit-log`, {
      token: owner.token,
    });
    expect(log.status).toBe(200);
    const setupEntries = log.body.log.filter((e: { event: string }) =>
      ["team.device.credentials-generated", "device.credential.generated"].includes(e.event),
    );
    expect(setupEntries).toHaveLength(2);
    for (const entry of setupEntries) {
      expect(entry.body).toMatchObject({
        device: { id: device.id, name: device.name },
        setup: { oneTimeCode: true, agentHost: "192.168.1.50" },
      });
      expect(entry.user ?? null).toBeNull();
    }
  });
});

describe("what a code reaches", () => {
  test("nothing but its setup: no other operation, no creation; refused, the code is not used up", async () => {
    const device = await createDevice();
    const token = bearer(device.credentials.otc!);
    for (const [method, path] of [
      ["GET", "/api/v1/user"],
      ["GET", `/api/v1/devices/${device.id}`],
      ["GET", `/api/v1/teams/${team.id}/devices`],
    ] as const) {
      expect((await server.request(method, path, { token })).status, path).toBe(401);
    }
    const create = await server.request("POST", "/api/v1/devices", {
      token,
      body: { name: "sneaky", team: team.id },
    });
    expect(create.status).toBe(401);
    expect(await checkIn(device.id, token)).toBe(401);
    expect((await setUp(device.credentials.otc!)).status).toBe(200);
  });

  test("a setup sends nothing but agentHost (400 naming the field); creating needs name and team", async () => {
    const device = await createDevice();
    const applicationId = await createApplication(server, owner, team.id);
    for (const field of ["name", "team", "application"]) {
      const reply = await setUp(device.credentials.otc!, {
        setup: true,
        [field]: field === "name" ? "x" : field === "team" ? team.id : applicationId,
      });
      expect(reply.status, field).toBe(400);
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    const noName = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { team: team.id },
    });
    expect(noName.status).toBe(400);
    expect(noName.body.errors[0].path).toBe("name");
    // A person's token is not a code: 400 naming setup.
    const byOwner = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { setup: true },
    });
    expect(byOwner.status).toBe(400);
    expect(byOwner.body.errors[0].path).toBe("setup");
    // None of it used the code up.
    expect((await setUp(device.credentials.otc!)).status).toBe(200);
  });
});

describe("guessing codes", () => {
  // Servers of their own, with low limits; every test calls from 127.0.0.1 unless it says so.
  let perAddress: TestServer;
  let overall: TestServer;
  beforeAll(async () => {
    [perAddress, overall] = await Promise.all([
      startServer({ rateLimits: { otc: { max: 3, windowMs: 60_000 } } }),
      startServer({
        rateLimits: {
          otc: { max: 100, windowMs: 60_000 },
          otcGlobal: { max: 4, windowMs: 60_000 },
        },
      }),
    ]);
  });
  afterAll(() => Promise.all([perAddress?.close(), overall?.close()]));

  /** A device of a new team on `on`, with its code. */
  async function deviceOn(on: TestServer) {
    const user = await makeUser(on);
    const own = await createTeam(on, user);
    const reply = await on.request("POST", "/api/v1/devices", {
      token: user.token,
      body: { name: "pi", team: own.id },
    });
    expect(reply.status, reply.text).toBe(200);
    return reply.body as Created;
  }

  /** A setup from a loopback address of its own (127.0.0.2, …): another client. */
  function setUpFrom(on: TestServer, localAddress: string, code: string) {
    return new Promise<{ status: number; retryAfter?: string; body: any }>((resolve, reject) => {
      const request = httpRequest(
        `${on.url}/api/v1/devices`,
        {
          method: "POST",
          localAddress,
          headers: { "content-type": "application/json", authorization: `Bearer ${bearer(code)}` },
        },
        (response) => {
          let text = "";
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () =>
            resolve({
              status: response.statusCode!,
              retryAfter: response.headers["retry-after"] as string | undefined,
              body: text ? JSON.parse(text) : undefined,
            }),
          );
        },
      );
      request.on("error", reject);
      request.end(JSON.stringify({ setup: true, agentHost: "pi" }));
    });
  }

  function expectTooMany(reply: Reply) {
    expect(reply.status, reply.text).toBe(429);
    expect(reply.body).toMatchObject({
      code: "too_many_requests",
      error: expect.stringMatching(/^Too many failed one-time codes.*; retry in \d+ s$/),
    });
    const retryAfter = Number(reply.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  }

  const guess = (on: TestServer, code = "abandon-ability-able-about") =>
    on.request("POST", "/api/v1/devices", {
      token: bearer(code),
      body: { setup: true, agentHost: "pi" },
    });

  test("past the limit of failures from one address, its setups are 429 with Retry-After, right code or not; another address's right code still works", async () => {
    const device = await deviceOn(perAddress);
    const other = await deviceOn(perAddress);
    for (let i = 0; i < 3; i++) expect((await guess(perAddress)).status).toBe(401);
    expectTooMany(await guess(perAddress));
    // Parallel guesses are counted one at a time: none gets through to a check.
    const burst = await Promise.all(Array.from({ length: 5 }, () => guess(perAddress)));
    expect(burst.map((r) => r.status)).toEqual([429, 429, 429, 429, 429]);
    // The guesser's right guess is refused too, and does not use the code up.
    expectTooMany(await guess(perAddress, device.credentials.otc!));
    // From another address, the right code sets its device up.
    const elsewhere = await setUpFrom(perAddress, "127.0.0.2", device.credentials.otc!);
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    expect(elsewhere.body.credentials.token).toMatch(/^fpd_/);
    // Its success counts nothing: that address's wrong codes still have their own allowance.
    expect((await setUpFrom(perAddress, "127.0.0.2", "abandon-ability-able-about")).status).toBe(
      401,
    );
    expect((await setUpFrom(perAddress, "127.0.0.2", other.credentials.otc!)).status).toBe(200);
  });

  test("failures spread over addresses are bounded overall", async () => {
    const device = await deviceOn(overall);
    const addresses = ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"];
    for (const address of addresses) {
      expect((await setUpFrom(overall, address, "abandon-ability-able-about")).status).toBe(401);
    }
    const refused = await setUpFrom(overall, "127.0.0.7", "abandon-ability-able-about");
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "too_many_requests" });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    // Every guess is refused unchecked, a right one too, until the window ends.
    expectTooMany(await guess(overall, device.credentials.otc!));
  });

  test("the default limits: a few mistakes and a right code pass", async () => {
    // `server` runs with the defaults (10 failures per address per 60 s); the tests above it
    // failed fewer than that, and its setups keep working.
    const device = await createDevice();
    expect((await setUp("abandon-ability-able-about")).status).toBe(401);
    expect((await setUp(device.credentials.otc!)).status).toBe(200);
  });
});
