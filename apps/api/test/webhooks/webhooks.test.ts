// Webhooks end to end (docs/webhooks.md): a receiver on 127.0.0.1 — allowed by
// WEBHOOK_ALLOWED_HOSTS, refused without it — gets signed deliveries that the doc's snippet
// verifies; retries, the log and redelivery; a hanging receiver does not slow the API; deliveries
// survive a restart.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { createTeam, makeUser, type TestTeam } from "../support/team-fixtures";
import { waiter } from "../support/until";
import { documentedVerify, type Receiver, startReceiver } from "./receiver";

const until = waiter(20_000, 50);
// A generous timeout: a loaded machine answering late would count as a failed attempt.
const FAST = { tickMs: 100, backoffMs: 50, timeoutMs: 10_000 };
const ALLOWED = ["127.0.0.1"];

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startServer({ webhookAllowedHosts: ALLOWED, webhookDelivery: FAST });
  receiver = await startReceiver();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

interface Hook {
  id: string;
  secret: string;
}

export async function createHook(
  on: TestServer,
  team: TestTeam,
  token: string,
  url: string,
  eventTypes: string[] = ["team.settings.updated"],
): Promise<Hook> {
  const reply = await on.request("POST", `/api/v1/teams/${team.id}/webhooks`, {
    token,
    body: { url, eventTypes },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as Hook;
}

export async function rename(on: TestServer, team: TestTeam, token: string, name: string) {
  const reply = await on.request("PUT", `/api/v1/teams/${team.id}`, { token, body: { name } });
  expect(reply.status, reply.text).toBe(200);
}

export async function deliveriesOf(on: TestServer, team: TestTeam, hook: Hook, token: string) {
  const path = `/api/v1/teams/${team.id}/webhooks/${hook.id}/deliveries`;
  const reply = await on.request("GET", path, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.deliveries as {
    id: string;
    status: string;
    event: { id: string; type: string };
    attempts: { responseCode: number | null; latencyMs: number; error: string | null }[];
  }[];
}

async function ownerWithTeam() {
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  return { owner, team };
}

describe("a team's webhooks", () => {
  test("signed deliveries that the doc's snippet verifies; the secret is shown once", async () => {
    const { owner, team } = await ownerWithTeam();
    const before = receiver.received.length;
    const hook = await createHook(server, team, owner.token, receiver.url);
    expect(hook.secret).toMatch(/^whsec_/);
    // No request is sent at creation.
    expect(receiver.received.length).toBe(before);
    const read = await server.request("GET", `/api/v1/teams/${team.id}/webhooks/${hook.id}`, {
      token: owner.token,
    });
    expect(read.body).toMatchObject({ id: hook.id, url: receiver.url, active: true });
    expect(read.body.secret).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain(hook.secret);

    await rename(server, team, owner.token, "Renamed For Hook");
    const got = await until("the delivery", async () =>
      receiver.received.find(
        (r) => r.body.includes(team.id) && r.body.includes("Renamed For Hook"),
      ),
    );
    const verify = await documentedVerify();
    const header = String(got.headers["flowplane-signature"]);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(got.body, header, hook.secret)).toBe(true);
    expect(verify(got.body, header, "whsec_wrong")).toBe(false);
    expect(verify(`${got.body} `, header, hook.secret)).toBe(false);
    expect(got.headers["flowplane-event"]).toBe("team.settings.updated");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["user-agent"]).toBe("Flowplane-Webhooks");
    const envelope = JSON.parse(got.body);
    expect(envelope).toMatchObject({
      type: "team.settings.updated",
      teamId: team.id,
      resource: { type: "team", id: team.id },
      actor: { id: owner.id },
    });
    expect(envelope.id).toMatch(/^\d+$/);

    const log = await until("the delivery logged as succeeded", async () => {
      const list = await deliveriesOf(server, team, hook, owner.token);
      return list[0]?.status === "succeeded" ? list : undefined;
    });
    expect(log[0]!.id).toBe(got.headers["flowplane-delivery"]);
    expect(log[0]!.event).toEqual({ id: envelope.id, type: "team.settings.updated" });
    expect(log[0]!.attempts).toEqual([expect.objectContaining({ responseCode: 200, error: null })]);
  });

  test("a loopback URL is refused at creation without the allowance", async () => {
    const other = await startServer({ webhookAllowedHosts: [], webhookDelivery: FAST });
    try {
      const owner = await makeUser(other);
      const team = await createTeam(other, owner);
      for (const url of [
        receiver.url,
        "http://localhost:9/x",
        "http://10.1.2.3/x",
        "http://169.254.169.254/latest",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://100.64.0.1/x",
        "http://0.0.0.0/x",
      ]) {
        const reply = await other.request("POST", `/api/v1/teams/${team.id}/webhooks`, {
          token: owner.token,
          body: { url },
        });
        expect(reply.status, url).toBe(400);
        expect(reply.body.code, url).toBe("webhook_url_refused");
      }
      const ftp = await other.request("POST", `/api/v1/teams/${team.id}/webhooks`, {
        token: owner.token,
        body: { url: "ftp://127.0.0.1/x" },
      });
      expect(ftp.status).toBe(400);
    } finally {
      await other.close();
    }
  });

  test("members and viewers cannot see or manage the hooks", async () => {
    const { owner, team } = await ownerWithTeam();
    const member = await server.user({ teams: [{ id: team.id, role: 30 }] });
    await createHook(server, team, owner.token, receiver.url);
    const list = await server.request("GET", `/api/v1/teams/${team.id}/webhooks`, {
      token: member.token,
    });
    expect(list.status).toBe(403);
    const create = await server.request("POST", `/api/v1/teams/${team.id}/webhooks`, {
      token: member.token,
      body: { url: receiver.url },
    });
    expect(create.status).toBe(403);
  });

  test("a receiver that fails three times then succeeds: acknowledged once, attempts logged", async () => {
    const { owner, team } = await ownerWithTeam();
    const flaky = await startReceiver();
    try {
      flaky.answer = (n) => (n < 3 ? 500 : 204);
      const hook = await createHook(server, team, owner.token, flaky.url);
      await rename(server, team, owner.token, "Flaky Receiver");
      const log = await until("the delivery acknowledged", async () => {
        const list = await deliveriesOf(server, team, hook, owner.token);
        return list[0]?.status === "succeeded" ? list : undefined;
      });
      expect(log).toHaveLength(1);
      expect(log[0]!.attempts.map((a) => a.responseCode)).toEqual([500, 500, 500, 204]);
      expect(log[0]!.attempts[0]!.error).toBe("answered 500");
      const ids = new Set(flaky.received.map((r) => r.headers["flowplane-delivery"]));
      expect(ids).toEqual(new Set([log[0]!.id]));
      expect(
        flaky.received.filter((r) => r.headers["flowplane-delivery"] === log[0]!.id),
      ).toHaveLength(4);
    } finally {
      await flaky.close();
    }
  });

  test("redeliver sends the same delivery id again; the log shows the new attempt", async () => {
    const { owner, team } = await ownerWithTeam();
    const hook = await createHook(server, team, owner.token, receiver.url);
    await rename(server, team, owner.token, "Redelivered");
    const [first] = await until("the delivery", async () => {
      const list = await deliveriesOf(server, team, hook, owner.token);
      return list[0]?.status === "succeeded" ? list : undefined;
    });
    const path = `/api/v1/teams/${team.id}/webhooks/${hook.id}/deliveries/${first!.id}`;
    const again = await server.request("POST", `${path}/redeliver`, { token: owner.token });
    expect(again.status, again.text).toBe(200);
    expect(again.body.id).toBe(first!.id);
    const done = await until("the second attempt", async () => {
      const one = await server.request("GET", path, { token: owner.token });
      return one.body.status === "succeeded" && one.body.attempts.length === 2
        ? one.body
        : undefined;
    });
    expect(done.id).toBe(first!.id);
    const sent = receiver.received.filter((r) => r.headers["flowplane-delivery"] === first!.id);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.body).toBe(sent[0]!.body);
  });

  test("a hanging receiver does not slow GET /api/v1/user/teams", async () => {
    const { owner, team } = await ownerWithTeam();
    const time = async () => {
      const started = performance.now();
      for (let i = 0; i < 20; i++) {
        const reply = await server.request("GET", "/api/v1/user/teams", { token: owner.token });
        expect(reply.status).toBe(200);
      }
      return performance.now() - started;
    };
    await time();
    const quiet = await time();
    const hang = await startReceiver();
    try {
      hang.answer = () => "hang";
      const hook = await createHook(server, team, owner.token, hang.url);
      for (let i = 0; i < 5; i++) await rename(server, team, owner.token, `Hanging ${i}`);
      await until("the receiver to hold requests", async () =>
        hang.received.length >= 3 ? true : undefined,
      );
      const busy = await time();
      // Generous: the same calls, with deliveries held open by the receiver.
      expect(busy).toBeLessThan(quiet * 5 + 200);
      const list = await deliveriesOf(server, team, hook, owner.token);
      expect(list.length).toBe(5);
    } finally {
      await hang.close();
    }
  });

  test("update, rotate-secret and delete; each audited", async () => {
    const { owner, team } = await ownerWithTeam();
    const hook = await createHook(server, team, owner.token, receiver.url);
    const path = `/api/v1/teams/${team.id}/webhooks/${hook.id}`;
    const changed = await server.request("PUT", path, {
      token: owner.token,
      body: { active: false, eventTypes: ["*"] },
    });
    expect(changed.body).toMatchObject({ active: false, eventTypes: ["*"] });
    const refused = await server.request("PUT", path, {
      token: owner.token,
      body: { url: "http://10.0.0.1/x" },
    });
    expect(refused.status).toBe(400);
    const rotated = await server.request("POST", `${path}/rotate-secret`, { token: owner.token });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const list = await server.request("GET", `/api/v1/teams/${team.id}/webhooks`, {
      token: owner.token,
    });
    expect(list.body).toMatchObject({ count: 1, webhooks: [{ id: hook.id }] });
    const gone = await server.request("DELETE", path, { token: owner.token });
    expect(gone.body).toEqual({ status: "okay" });
    expect((await server.request("GET", path, { token: owner.token })).status).toBe(404);
    const log = await server.request("GET", `/api/v1/teams/${team.id}/audit-log?limit=50`, {
      token: owner.token,
    });
    const events = (log.body.log as { event: string }[]).map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining([
        "team.webhook.created",
        "team.webhook.updated",
        "team.webhook.deleted",
      ]),
    );
  });
});
