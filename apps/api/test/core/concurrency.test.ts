// Writes that don't collide (issue 40), through the real server: ETags on the reads of teams,
// applications, instances, devices and device groups, and `If-Match` on their changes (a stale
// one is 412 and changes nothing; of two writers holding the same ETag one wins); and
// `Idempotency-Key` on every create the document declares it for (a retry answers the first
// outcome and creates nothing more; another request under the key, another caller's key, a
// failure, a create whose answer carries a secret).
import { Role } from "@flowplane/contract";
import { afterAll, describe, expect, test } from "vitest";
import {
  createDeviceGroup,
  createRunningDevice,
  makeUser,
  type TestUser,
} from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team } = await serverWithTeam();
afterAll(() => server.close());

const running = await createRunningDevice(server, owner, team.id);
const group = await createDeviceGroup(server, owner, team.id);

/** Each resource with an ETag: its path, and a change of its own (`n` makes each different). */
const RESOURCES: {
  name: string;
  path: string;
  method: "PUT" | "PATCH";
  change: (n: number) => Record<string, unknown>;
  /** What shows the change in the resource's GET (or in the change itself). */
  shown: (body: any) => unknown;
}[] = [
  {
    name: "team",
    path: `/api/v1/teams/${team.id}`,
    method: "PUT",
    change: (n) => ({ name: `Team renamed ${n}` }),
    shown: (body) => body.name,
  },
  {
    name: "application",
    path: `/api/v1/applications/${running.applicationId}`,
    method: "PUT",
    change: (n) => ({ description: `described ${n}` }),
    shown: (body) => body.description,
  },
  {
    name: "instance",
    path: `/api/v1/projects/${running.instanceId}`,
    method: "PUT",
    change: (n) => ({ settings: { env: [{ name: "N", value: String(n) }] } }),
    shown: (body) => body.settings.env.find((v: { name: string }) => v.name === "N")?.value,
  },
  {
    name: "device",
    path: `/api/v1/devices/${running.deviceId}`,
    method: "PUT",
    change: (n) => ({ name: `device renamed ${n}` }),
    shown: (body) => body.name,
  },
  {
    name: "device group",
    path: `/api/v1/applications/${group.applicationId}/device-groups/${group.groupId}`,
    method: "PUT",
    change: (n) => ({ name: `group renamed ${n}` }),
    shown: (body) => body.name,
  },
];

let changes = 0;

async function read(path: string) {
  const reply = await server.request("GET", path, { token: owner.token });
  expect(reply.status, reply.text).toBe(200);
  const etag = reply.headers.get("etag");
  expect(etag, `${path}: ETag`).toMatch(/^"\d+"$/);
  return { body: reply.body, etag: etag! };
}

describe("ETag and If-Match", () => {
  test("every operation that declares If-Match is one of these resources' changes", () => {
    const declared: string[] = [];
    for (const [path, item] of Object.entries(server.document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, any>)) {
        const headers = (operation.parameters ?? []).filter((p: any) => p.in === "header");
        if (headers.some((p: any) => p.name === "If-Match")) {
          declared.push(`${method.toUpperCase()} ${path}`);
          expect(operation.responses["412"], `${method} ${path}: 412`).toBeDefined();
          const read = (item as Record<string, any>).get;
          expect(read?.responses["200"]?.headers?.ETag, `GET ${path}: ETag`).toBeDefined();
        }
      }
    }
    expect(declared.sort()).toEqual(
      [
        "PUT /api/v1/teams/{teamId}",
        "DELETE /api/v1/teams/{teamId}",
        "PUT /api/v1/applications/{applicationId}",
        "DELETE /api/v1/applications/{applicationId}",
        "PUT /api/v1/projects/{instanceId}",
        "DELETE /api/v1/projects/{instanceId}",
        "PUT /api/v1/devices/{deviceId}",
        "DELETE /api/v1/devices/{deviceId}",
        "PUT /api/v1/applications/{applicationId}/device-groups/{groupId}",
        "PATCH /api/v1/applications/{applicationId}/device-groups/{groupId}",
        "DELETE /api/v1/applications/{applicationId}/device-groups/{groupId}",
      ].sort(),
    );
  });

  for (const resource of RESOURCES) {
    test(`${resource.name}: a stale If-Match is 412 and changes nothing; a matching one changes it and its ETag`, async () => {
      const first = await read(resource.path);
      const n = ++changes;
      const changed = await server.request(resource.method, resource.path, {
        token: owner.token,
        body: resource.change(n),
        headers: { "if-match": first.etag },
      });
      expect(changed.status, changed.text).toBeLessThan(300);
      const second = await read(resource.path);
      expect(resource.shown(second.body)).toEqual(resource.shown(resource.change(n)));
      expect(second.etag).not.toBe(first.etag);
      // The change answers the new ETag: the next change needs no read in between.
      expect(changed.headers.get("etag")).toBe(second.etag);

      // The first ETag is stale now.
      const stale = await server.request(resource.method, resource.path, {
        token: owner.token,
        body: resource.change(++changes),
        headers: { "if-match": first.etag },
      });
      expect(stale.status, stale.text).toBe(412);
      expect(stale.body).toMatchObject({ code: "precondition_failed" });
      expect(stale.body.error).toMatch(/changed since it was read/);
      const after = await read(resource.path);
      expect(after.etag).toBe(second.etag);
      expect(resource.shown(after.body)).toEqual(resource.shown(second.body));

      // A weak ETag never matches (strong comparison); `*` matches whatever the version.
      const weak = await server.request(resource.method, resource.path, {
        token: owner.token,
        body: resource.change(++changes),
        headers: { "if-match": `W/${second.etag}` },
      });
      expect(weak.status).toBe(412);
      const any = await server.request(resource.method, resource.path, {
        token: owner.token,
        body: resource.change(++changes),
        headers: { "if-match": "*" },
      });
      expect(any.status, any.text).toBeLessThan(300);
      // Without If-Match the change goes ahead, as before.
      const plain = await server.request(resource.method, resource.path, {
        token: owner.token,
        body: resource.change(++changes),
      });
      expect(plain.status, plain.text).toBeLessThan(300);
    });

    test(`${resource.name}: two changes sent at once with the same ETag: one wins, the other is 412`, async () => {
      const { etag } = await read(resource.path);
      const [a, b] = [++changes, ++changes];
      const replies = await Promise.all(
        [a, b].map((n) =>
          server.request(resource.method, resource.path, {
            token: owner.token,
            body: resource.change(n),
            headers: { "if-match": etag },
          }),
        ),
      );
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses, replies.map((r) => r.text).join("\n")).toEqual([200, 412]);
      const winner = replies[0]!.status === 200 ? a : b;
      const after = await read(resource.path);
      expect(resource.shown(after.body)).toEqual(resource.shown(resource.change(winner)));
    });
  }

  test("a device's check-ins leave its ETag alone; a rename changes it", async () => {
    const path = `/api/v1/devices/${running.deviceId}`;
    const before = await read(path);
    const seen = () =>
      (server.db as any)
        .selectFrom("devices")
        .select(["last_seen_at", "agent_version"])
        .where("id", "=", running.deviceId)
        .executeTakeFirstOrThrow();
    const seenBefore = await seen();
    const checkIn = await fetch(`${server.url}${path}/live/state`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${running.deviceToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        state: "stopped",
        project: null,
        application: running.applicationId,
        snapshot: running.snapshotId,
        settings: null,
        agentVersion: "4.2.2",
        nodeRedVersion: "4.1.15",
      }),
    });
    expect(checkIn.status).toBeLessThan(500);
    const seenAfter = await seen();
    expect(seenAfter.agent_version).toBe("4.2.2");
    expect(seenAfter.last_seen_at.getTime()).toBeGreaterThanOrEqual(
      seenBefore.last_seen_at.getTime(),
    );
    expect(seenBefore.agent_version).not.toBe("4.2.2");
    const after = await read(path);
    expect(after.etag).toBe(before.etag);
  });

  test("a group's members are part of it: changing them changes its ETag", async () => {
    const path = `/api/v1/applications/${group.applicationId}/device-groups/${group.groupId}`;
    const before = await read(path);
    const added = await server.request("PATCH", path, {
      token: owner.token,
      body: { add: [group.deviceId] },
      headers: { "if-match": before.etag },
    });
    expect(added.status, added.text).toBe(200);
    const after = await read(path);
    expect(after.body.devices.map((d: { id: string }) => d.id)).toEqual([group.deviceId]);
    expect(after.etag).not.toBe(before.etag);
    expect(added.headers.get("etag")).toBe(after.etag);
    const stale = await server.request("PATCH", path, {
      token: owner.token,
      body: { remove: [group.deviceId] },
      headers: { "if-match": before.etag },
    });
    expect(stale.status).toBe(412);
    expect((await read(path)).body.devices).toHaveLength(1);
  });

  test("a group's ETag changes when a member leaves it from elsewhere: joins another group, moves, is deleted", async () => {
    const leaves: [string, (g: { applicationId: string; deviceId: string }) => Promise<void>][] = [
      [
        "joins another group",
        async (g) => {
          const other = await server.request(
            "POST",
            `/api/v1/applications/${g.applicationId}/device-groups`,
            { token: owner.token, body: { name: `other ${g.deviceId}` } },
          );
          expect(other.status, other.text).toBe(201);
          const joined = await server.request(
            "PATCH",
            `/api/v1/applications/${g.applicationId}/device-groups/${other.body.id}`,
            { token: owner.token, body: { add: [g.deviceId] } },
          );
          expect(joined.status, joined.text).toBe(200);
        },
      ],
      [
        "moves out of the application",
        async (g) => {
          const moved = await server.request("PUT", `/api/v1/devices/${g.deviceId}`, {
            token: owner.token,
            body: { application: null },
          });
          expect(moved.status, moved.text).toBe(200);
        },
      ],
      [
        "is deleted",
        async (g) => {
          const deleted = await server.request("DELETE", `/api/v1/devices/${g.deviceId}`, {
            token: owner.token,
          });
          expect(deleted.status, deleted.text).toBe(200);
        },
      ],
    ];
    for (const [how, leave] of leaves) {
      const g = await createDeviceGroup(server, owner, team.id);
      const path = `/api/v1/applications/${g.applicationId}/device-groups/${g.groupId}`;
      const added = await server.request("PATCH", path, {
        token: owner.token,
        body: { add: [g.deviceId] },
      });
      expect(added.status, added.text).toBe(200);
      const before = await read(path);
      expect(before.body.devices, how).toHaveLength(1);
      await leave(g);
      const after = await read(path);
      expect(after.body.devices, how).toEqual([]);
      expect(after.etag, how).not.toBe(before.etag);
    }
  });

  test("a stale If-Match on a DELETE is 412 and deletes nothing; the current one deletes", async () => {
    const created = await server.request("POST", "/api/v1/applications", {
      token: owner.token,
      body: { name: "to delete", teamId: team.id },
    });
    const path = `/api/v1/applications/${created.body.id}`;
    const first = await read(path);
    await server.request("PUT", path, { token: owner.token, body: { description: "changed" } });
    const stale = await server.request("DELETE", path, {
      token: owner.token,
      headers: { "if-match": first.etag },
    });
    expect(stale.status).toBe(412);
    const current = await read(path);
    const deleted = await server.request("DELETE", path, {
      token: owner.token,
      headers: { "if-match": current.etag },
    });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await server.request("GET", path, { token: owner.token })).status).toBe(404);
  });
});

// ---------------------------------------------------------------------------------------------
// Idempotency-Key

/** The operations that take the header, and those that refuse it, from the served document. */
function idempotencyOperations() {
  const replay: { method: string; path: string }[] = [];
  const refused: { method: string; path: string }[] = [];
  const other: string[] = [];
  for (const [path, item] of Object.entries(server.document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (method !== "post") continue;
      const takes = (operation.parameters ?? []).some(
        (p: any) => p.in === "header" && p.name === "Idempotency-Key",
      );
      if (takes) replay.push({ method: "POST", path });
      else if (String(operation.description).includes("`Idempotency-Key` is refused")) {
        refused.push({ method: "POST", path });
      } else other.push(`POST ${path}`);
    }
  }
  return { replay, refused, other };
}

/** A path of the document with its parameters filled with ids of this world (or made-up ones). */
function filled(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, param: string) =>
    param === "teamId"
      ? team.id
      : param === "applicationId"
        ? running.applicationId
        : "x0x0x0x0x0x0",
  );
}

async function countTeams(user: TestUser): Promise<number> {
  const reply = await server.request("GET", "/api/v1/user/teams", { token: user.token });
  return reply.body.count as number;
}

describe("Idempotency-Key", () => {
  test("every POST of the document takes it, refuses it, or is not a create (listed here)", () => {
    const { replay, refused, other } = idempotencyOperations();
    expect(replay.length).toBeGreaterThan(10);
    expect(refused.map((o) => o.path).sort()).toEqual(
      [
        "/api/v1/broker/tokens",
        "/api/v1/devices",
        "/api/v1/projects/{instanceId}/editor/token",
        "/api/v1/teams/{teamId}/devices/provisioning",
        "/api/v1/teams/{teamId}/webhooks",
        "/api/v1/user/tokens",
      ].sort(),
    );
    // A POST that is not a create: an action, a check, an export, a re-send. A new POST must be
    // declared a create (meta `create`) or added here.
    expect(other.sort()).toEqual(
      [
        "POST /api/v1/devices/_/register",
        "POST /api/v1/devices/{deviceId}/actions/restart",
        "POST /api/v1/devices/{deviceId}/actions/start",
        "POST /api/v1/devices/{deviceId}/actions/suspend",
        "POST /api/v1/devices/{deviceId}/generate_credentials",
        "POST /api/v1/devices/{deviceId}/live/state",
        "POST /api/v1/projects/check-name",
        "POST /api/v1/projects/{instanceId}/actions/restart",
        "POST /api/v1/projects/{instanceId}/actions/rollback",
        "POST /api/v1/projects/{instanceId}/actions/start",
        "POST /api/v1/projects/{instanceId}/actions/stop",
        "POST /api/v1/projects/{instanceId}/actions/suspend",
        "POST /api/v1/projects/{instanceId}/devices/settings",
        "POST /api/v1/projects/{instanceId}/import",
        "POST /api/v1/projects/{instanceId}/snapshots/{snapshotId}/export",
        "POST /api/v1/rollouts/{rolloutId}/abort",
        "POST /api/v1/rollouts/{rolloutId}/approve",
        "POST /api/v1/rollouts/{rolloutId}/devices/{deviceId}/health",
        "POST /api/v1/rollouts/{rolloutId}/pause",
        "POST /api/v1/rollouts/{rolloutId}/resume",
        "POST /api/v1/snapshots/{snapshotId}/export",
        "POST /api/v1/teams/check-slug",
        "POST /api/v1/teams/{teamId}/invitations/{invitationId}",
        "POST /api/v1/teams/{teamId}/webhooks/{hookId}/deliveries/{deliveryId}/redeliver",
        "POST /api/v1/teams/{teamId}/webhooks/{hookId}/rotate-secret",
      ].sort(),
    );
  });

  test("every create that takes it: a key over 255 characters is 400; a failure is not kept", async () => {
    const { replay, refused } = idempotencyOperations();
    const admin = { token: server.adminToken };
    for (const { method, path } of replay) {
      const url = filled(path);
      const long = await server.request(method, url, {
        token: admin.token,
        body: {},
        headers: { "idempotency-key": "k".repeat(256) },
      });
      expect(long.status, `${path}: ${long.text}`).toBe(400);
      expect(long.body.code).toBe("invalid_request");
      expect(long.body.error).toMatch(/Idempotency-Key/);
      // A body it refuses: refused again when sent again (the key is given back, not pinned).
      const key = `failing ${path}`;
      for (let attempt = 0; attempt < 2; attempt++) {
        const failed = await server.request(method, url, {
          token: admin.token,
          body: { notAField: true },
          headers: { "idempotency-key": key },
        });
        expect(failed.status, `${path}: ${failed.text}`).toBeGreaterThanOrEqual(400);
        expect(failed.status).toBeLessThan(500);
        expect(failed.headers.get("idempotent-replayed")).toBeNull();
      }
    }
    for (const { path } of refused) {
      const reply = await server.request("POST", filled(path), {
        token: admin.token,
        body: {},
        headers: { "idempotency-key": "secret-bearing" },
      });
      expect(reply.status, `${path}: ${reply.text}`).toBe(400);
      expect(reply.body.code).toBe("idempotency_unsupported");
    }
  });

  test("a retried create answers the first outcome and creates one thing", async () => {
    const user = await makeUser(server);
    const body = { name: "Idempotent team" };
    const send = () =>
      server.request("POST", "/api/v1/teams", {
        token: user.token,
        body,
        headers: { "idempotency-key": "create-team-1" },
      });
    const first = await send();
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await countTeams(user)).toBe(1);

    // Another body under the same key: 422, nothing created.
    const other = await server.request("POST", "/api/v1/teams", {
      token: user.token,
      body: { name: "Another team" },
      headers: { "idempotency-key": "create-team-1" },
    });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_key_reused");
    expect(await countTeams(user)).toBe(1);

    // Another user's same key is theirs.
    const someone = await makeUser(server);
    const theirs = await server.request("POST", "/api/v1/teams", {
      token: someone.token,
      body,
      headers: { "idempotency-key": "create-team-1" },
    });
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  test("a 201 create is answered again with its status; retries sent at once create one", async () => {
    const path = `/api/v1/applications/${running.applicationId}/device-groups`;
    const send = () =>
      server.request("POST", path, {
        token: owner.token,
        body: { name: "idempotent group" },
        headers: { "idempotency-key": "group-at-once" },
      });
    const replies = await Promise.all([send(), send(), send()]);
    const created = replies.filter((r) => r.status === 201);
    // Each is the first (201), its replay (201, replayed) or, while the first runs, 409.
    for (const reply of replies) {
      expect([201, 409], reply.text).toContain(reply.status);
      if (reply.status === 409) expect(reply.body.code).toBe("idempotency_in_progress");
    }
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(created[0]!.body.id);
    const list = await server.request("GET", path, { token: owner.token });
    expect(
      list.body.groups.filter((g: { name: string }) => g.name === "idempotent group"),
    ).toHaveLength(1);
  });

  test("a first request that ended without an outcome is never run again: 409 outcome unknown", async () => {
    const user = await makeUser(server);
    const send = () =>
      server.request("POST", "/api/v1/teams", {
        token: user.token,
        body: { name: "Crashed team" },
        headers: { "idempotency-key": "crash-1" },
      });
    expect((await send()).status).toBe(200);
    // As a first request whose process died after its create committed leaves it: no outcome.
    const leave = (ageMs: number) =>
      (server.db as any)
        .updateTable("idempotency_keys")
        .set({ status: null, body: null, created_at: new Date(Date.now() - ageMs) })
        .where("key", "=", "crash-1")
        .execute();
    await leave(60 * 1000);
    const running = await send();
    expect(running.status).toBe(409);
    expect(running.body.code).toBe("idempotency_in_progress");
    await leave(11 * 60 * 1000);
    const unknown = await send();
    expect(unknown.status).toBe(409);
    expect(unknown.body.code).toBe("idempotency_outcome_unknown");
    expect(unknown.body.error).toMatch(/new key/);
    expect(await countTeams(user)).toBe(1);
  });

  test("a replay is answered only to a caller still authorized: one removed from the team is refused", async () => {
    const user = await makeUser(server, { teams: [{ id: team.id, role: Role.owner }] });
    const send = () =>
      server.request("POST", `/api/v1/applications/${group.applicationId}/device-groups`, {
        token: user.token,
        body: { name: "removed member's group" },
        headers: { "idempotency-key": "removed-1" },
      });
    const first = await send();
    expect(first.status, first.text).toBe(201);
    expect((await send()).headers.get("idempotent-replayed")).toBe("true");
    await (server.db as any)
      .deleteFrom("team_members")
      .where("team_id", "=", team.id)
      .where("user_id", "=", user.id)
      .execute();
    const removed = await send();
    expect([403, 404], removed.text).toContain(removed.status);
    expect(removed.headers.get("idempotent-replayed")).toBeNull();
    expect(removed.text).not.toContain(first.body.id);
  });

  test("nothing secret is kept: the request is a keyed digest, and a secret-bearing create refuses the key", async () => {
    const user = await makeUser(server);
    const refused = await server.request("POST", "/api/v1/user/tokens", {
      token: user.token,
      body: { name: "scripted" },
      headers: { "idempotency-key": "token-1" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("idempotency_unsupported");
    const tokens = await server.request("GET", "/api/v1/user/tokens", { token: user.token });
    expect(tokens.body.tokens ?? tokens.body).not.toContainEqual(
      expect.objectContaining({ name: "scripted" }),
    );

    // A user created with a password: the kept row holds neither it nor its plain digest.
    const password = "correct horse battery staple 42";
    const created = await server.request("POST", "/api/v1/users", {
      token: server.adminToken,
      body: { username: "idempotent-user", name: "I", email: "i@example.com", password },
      headers: { "idempotency-key": "user-1" },
    });
    expect(created.status, created.text).toBe(200);
    const rows = await (server.db as any).selectFrom("idempotency_keys").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(password);
    expect(rows.length).toBeGreaterThan(0);
  });

  test("the housekeeping sweeps keys past their 24 hours; the key then runs again", async () => {
    const user = await makeUser(server);
    const send = () =>
      server.request("POST", "/api/v1/teams", {
        token: user.token,
        body: { name: "Swept team" },
        headers: { "idempotency-key": "sweep-1" },
      });
    expect((await send()).status).toBe(200);
    await (server.db as any)
      .updateTable("idempotency_keys")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("key", "=", "sweep-1")
      .execute();
    await server.app.sweepTokens();
    const left = await (server.db as any)
      .selectFrom("idempotency_keys")
      .select("key")
      .where("key", "=", "sweep-1")
      .execute();
    expect(left).toEqual([]);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await countTeams(user)).toBe(2);
  });
});
