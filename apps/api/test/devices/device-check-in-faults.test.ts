// One device's bad check-in fails only itself (issue 32, finding 5): what it reports must be text
// the database can store (NUL or a lone surrogate: 400 naming the field), and a batch of check-ins
// whose statement fails is retried one by one, so the other devices in it (any team's) succeed.
import { tokenDigest } from "@flowplane/auth";
import { checkInDevice } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, TOKEN_SECRET, type TestServer } from "../support/harness";
import { createTeam, makeUser } from "../support/team-fixtures";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function device() {
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: `dev-${Math.random().toString(36).slice(2, 7)}`, team: team.id },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { id: string; credentials: { token: string } };
}

/** A check-in as the agent posts it; the body as raw JSON text. */
async function checkIn(id: string, token: string, json: string) {
  const response = await fetch(`${server.url}/api/v1/devices/${id}/live/state`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: json,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe("a device's bad check-in fails only itself", () => {
  test("a report with NUL or a lone surrogate is 400 invalid_request naming the field", async () => {
    const d = await device();
    for (const [field, json] of [
      ["state", String.raw`{"state":"x\u0000"}`],
      ["agentVersion", String.raw`{"state":"running","agentVersion":"4.\ud800"}`],
      ["settings", String.raw`{"settings":"\u0000"}`],
    ]) {
      const reply = await checkIn(d.id, d.credentials.token, json!);
      expect(reply.status, json).toBe(400);
      expect(reply.body).toMatchObject({ code: "invalid_request", requestId: expect.any(String) });
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    // The device still checks in.
    const fine = await checkIn(d.id, d.credentials.token, `{"state":"running"}`);
    expect([200, 409]).toContain(fine.status);
  });

  test("a batch whose statement fails is retried one by one: the other devices' check-ins all succeed", async () => {
    const [bad, good] = [await device(), await device()];
    const report = {
      state: "running",
      agentVersion: "4.2.1",
      nodeRedVersion: null,
      nodejsVersion: null,
      snapshot: null,
      settings: null,
    };
    const digest = (token: string) => tokenDigest(TOKEN_SECRET, token);
    // Made in one turn, so they go to the database in one batch (the faulty one first). The NUL
    // is what the route now refuses; here it stands for any report that fails the statement.
    const poisoned = checkInDevice(server.db, bad.id, digest(bad.credentials.token), {
      ...report,
      state: "x\u0000",
    });
    const others = Array.from({ length: 150 }, () =>
      checkInDevice(server.db, good.id, digest(good.credentials.token), report),
    );
    const results = await Promise.allSettled([poisoned, ...others]);
    expect(results[0]!.status).toBe("rejected");
    const failed = results.slice(1).filter((r) => r.status === "rejected");
    expect(failed.length).toBe(0);
    for (const result of results.slice(1)) {
      expect((result as PromiseFulfilledResult<unknown>).value).toMatchObject({ target: null });
    }
  });
});
