// A device set up with its one-time code, as the agent does it (`--otc <code> --ff-url <url>`):
// `POST /api/v1/devices` with the base64 of the code as the bearer and `{ setup: true, agentHost }`
// answers the device with new credentials (the old token dies), once; a used, expired or unknown
// code is 401; two setups at once: one wins. The code reaches nothing else. The real agent's
// setup is in device-agent.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "./harness";
import {
  createApplication,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "./team-fixtures";

let server: TestServer;
let owner: TestUser;
let team: TestTeam;

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  owner = await makeUser(server);
  team = await createTeam(server, owner);
});
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
