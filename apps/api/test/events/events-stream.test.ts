// A team's events (GET /teams/{teamId}/events) as an integrator reads them: Server-Sent Events that
// show a rollout's waves in order and a rename as `team.settings.updated`; a reconnect with
// `Last-Event-ID` that misses nothing and repeats nothing across a platform restart; 410 once the
// cursor is behind retention; the JSON pages and filters; what a member sees beside an owner;
// another team's 404; a revoked token's stream ending; a read-only token reading.
import { pruneEvents } from "@flowplane/db";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDb, type TestDb } from "@flowplane/db/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { type Person, teamOfRoles } from "../support/team-of-roles";
import { rolloutFixture, waitForRollout } from "../rollouts/rollout-fleet";
import { openStream, type StreamedEvent } from "./sse-client";

const STREAM = { heartbeatMs: 500, recheckMs: 200, pollMs: 100 };

let testDb: TestDb;
let dataDir: string;
let server: TestServer;
let owner: Person;
let member: Person;
let viewer: Person;
let outsider: Person;
let teamId: string;

beforeAll(async () => {
  testDb = await createTestDb();
  dataDir = await mkdtemp(join(tmpdir(), "flowplane-events-"));
  server = await startServer({ db: testDb, dataDir, eventStream: STREAM });
  ({ owner, member, viewer, outsider, teamId } = await teamOfRoles(server, "events"));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await testDb?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

let renames = 0;
const rename = async (on = server) => {
  const reply = await on.request("PUT", `/api/v1/teams/${teamId}`, {
    token: owner.token,
    body: { name: `Events ${++renames}` },
  });
  expect(reply.status, reply.text).toBe(200);
  return `Events ${renames}`;
};

const list = async (query: string, token = owner.token, on = server) => {
  const reply = await on.request("GET", `/api/v1/teams/${teamId}/events?${query}`, {
    token,
    headers: { accept: "application/json" },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { meta: { next_cursor?: string }; events: StreamedEvent[] };
};

/** The stream's URL on the server running now. */
const eventsUrl = () => `${server.url}/api/v1/teams/${teamId}/events`;

const ids = (events: StreamedEvent[]) => events.map((event) => event.id);

describe("the stream", () => {
  test("shows a rename as team.settings.updated and a rollout's waves, in order", async () => {
    const stream = await openStream(eventsUrl(), owner.token);
    expect(stream.status).toBe(200);
    const name = await rename();
    const [renamed] = await stream.until((events) =>
      events.some((event) => event.type === "team.settings.updated"),
    );
    expect(renamed).toMatchObject({
      type: "team.settings.updated",
      teamId,
      resource: { type: "team", id: teamId },
      actor: { id: owner.id },
    });
    expect(JSON.stringify(renamed!.data)).toContain(name);

    const fixture = await rolloutFixture(server, owner, teamId, 3);
    const created = await server.request("POST", "/api/v1/rollouts", {
      token: owner.token,
      body: {
        snapshotId: fixture.next,
        deviceGroupId: fixture.groupId,
        waves: [{ count: 1 }, { percent: 100 }],
        soakSeconds: 1,
      },
    });
    expect(created.status, created.text).toBe(200);
    const rolloutId = created.body.id as string;
    await waitForRollout(server, owner, rolloutId, (r) => r.state === "succeeded", fixture.devices);
    const events = await stream.until((seen) =>
      seen.some((event) => event.type === "application.rollout.succeeded"),
    );
    const ofRollout = events
      .filter((event) => event.type.startsWith("application.rollout."))
      .filter((event) => event.data.rollout?.id === rolloutId);
    const steps = ofRollout.map((event) => [event.type, event.data.wave?.index ?? event.data.wave]);
    const types = ofRollout.map((event) => event.type);
    expect(types[0]).toBe("application.rollout.created");
    expect(
      types.filter((type) => type === "application.rollout.wave-started"),
      `${steps}`,
    ).toHaveLength(2);
    expect(types.at(-1)).toBe("application.rollout.succeeded");
    // Each device was deployed to and became healthy, in the devices' own events.
    for (const device of fixture.devices) {
      const own = events.filter((event) => event.resource.id === device.id).map((e) => e.type);
      expect(own.indexOf("device.rollout.deploying")).toBeGreaterThanOrEqual(0);
      expect(own.indexOf("device.rollout.healthy")).toBeGreaterThan(
        own.indexOf("device.rollout.deploying"),
      );
    }
    // Strictly in order, each once, and the same as the JSON list.
    const numbers = events.map((event) => BigInt(event.id));
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]! > numbers[i - 1]!).toBe(true);
    const page = await list(`cursor=${BigInt(events[0]!.id) - 1n}&limit=1000`);
    expect(ids(page.events).slice(0, events.length)).toEqual(ids(events));
    stream.close();
  }, 90_000);

  test("filters by type (comma-separated or repeated) and by resource", async () => {
    const stream = await openStream(eventsUrl(), owner.token, {
      query: "type=team.settings.updated,team.user.role-changed&resourceType=team",
    });
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "filtered out", team: teamId },
    });
    expect(created.status, created.text).toBe(200);
    await rename();
    const events = await stream.until((seen) => seen.length >= 1);
    expect(events.map((event) => event.type)).toEqual(["team.settings.updated"]);
    stream.close();
    const repeated = await list("type=team.settings.updated&type=team.device.created");
    expect(new Set(repeated.events.map((event) => event.type))).toEqual(
      new Set(["team.settings.updated", "team.device.created"]),
    );
    const ofDevice = await list(`resourceType=device&resourceId=${created.body.id}`);
    expect(ofDevice.events.length).toBeGreaterThan(0);
    for (const event of ofDevice.events) expect(event.resource.id).toBe(created.body.id);
  });

  test("a member sees what the audit log shows them: devices, not the team's settings", async () => {
    const owners = await openStream(eventsUrl(), owner.token);
    const members = await openStream(eventsUrl(), member.token);
    await rename();
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "seen by members", team: teamId },
    });
    expect(created.status, created.text).toBe(200);
    const ownerSaw = await owners.until((seen) =>
      seen.some((event) => event.resource.id === created.body.id),
    );
    expect(ownerSaw.map((event) => event.type)).toContain("team.settings.updated");
    const memberSaw = await members.until((seen) =>
      seen.some((event) => event.resource.id === created.body.id),
    );
    expect(memberSaw.map((event) => event.type)).not.toContain("team.settings.updated");
    expect(memberSaw.every((event) => ["project", "device"].includes(event.resource.type))).toBe(
      true,
    );
    owners.close();
    members.close();
    const listed = await list("limit=1000", viewer.token);
    expect(listed.events.every((event) => event.resource.type !== "team")).toBe(true);
  });

  test("another team gets 404; a read-only token reads; a revoked token's stream ends", async () => {
    const other = await server.request("GET", `/api/v1/teams/${teamId}/events`, {
      token: outsider.token,
      headers: { accept: "application/json" },
    });
    expect(other.status).toBe(404);
    const refused = await openStream(eventsUrl(), outsider.token);
    expect(refused.status).toBe(404);

    const readOnly = await server.user({
      scope: { readOnly: true },
      teams: [{ id: teamId, role: 50 }],
    });
    expect((await list("limit=1", readOnly.token)).events).toBeDefined();

    const created = await server.request("POST", "/api/v1/user/tokens", {
      token: owner.token,
      body: { name: "streaming" },
    });
    expect(created.status, created.text).toBe(200);
    const stream = await openStream(eventsUrl(), created.body.token);
    await rename();
    await stream.until((seen) => seen.length > 0);
    const revoked = await server.request("DELETE", `/api/v1/user/tokens/${created.body.id}`, {
      token: owner.token,
    });
    expect(revoked.status).toBe(204);
    await stream.ended;
  });

  test("the JSON list pages oldest first with limit and cursor", async () => {
    for (let i = 0; i < 5; i++) await rename();
    const all = await list("limit=1000");
    expect(all.events.length).toBeGreaterThan(4);
    const paged: StreamedEvent[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await list(`limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      paged.push(...page.events);
      cursor = page.meta.next_cursor;
      if (!cursor) break;
      expect(page.events).toHaveLength(3);
    }
    // Events may have come since the first read: the pages start with the same ones.
    expect(ids(paged).slice(0, all.events.length)).toEqual(ids(all.events));
    const bad = await server.request("GET", `/api/v1/teams/${teamId}/events?cursor=nope`, {
      token: owner.token,
      headers: { accept: "application/json" },
    });
    expect(bad.status).toBe(400);
  });
});

describe("resuming", () => {
  test("Last-Event-ID misses nothing and repeats nothing across a platform restart", async () => {
    const stream = await openStream(eventsUrl(), owner.token);
    await rename();
    await rename();
    const before = await stream.until((seen) => seen.length >= 2);
    stream.close();
    const lastSeen = before.at(-1)!.id;
    // Written while nobody listens, then the platform stops and another starts on its database.
    await rename();
    await server.close();
    server = await startServer({ db: testDb, dataDir, eventStream: STREAM });
    await rename();
    const resumed = await openStream(eventsUrl(), owner.token, { lastEventId: lastSeen });
    await rename();
    const after = await resumed.until(
      (seen) => seen.filter((event) => event.type === "team.settings.updated").length >= 3,
    );
    const expected = await list(`cursor=${lastSeen}&limit=1000`);
    expect(ids(after)).toEqual(ids(expected.events));
    expect(new Set(ids([...before, ...after])).size).toBe(before.length + after.length);
    resumed.close();
  }, 60_000);

  test("a cursor behind retention is 410 events_expired, before anything is sent", async () => {
    const first = (await list("limit=1")).events[0]!;
    await rename();
    await pruneEvents(server.db, new Date(Date.now() + 60_000));
    const json = await server.request("GET", `/api/v1/teams/${teamId}/events?cursor=${first.id}`, {
      token: owner.token,
      headers: { accept: "application/json" },
    });
    expect(json.status).toBe(410);
    expect(json.body.code).toBe("events_expired");
    const stream = await openStream(eventsUrl(), owner.token, { lastEventId: first.id });
    expect(stream.status).toBe(410);
    // A new reader starts at the newest, and hears what comes.
    const fresh = await openStream(eventsUrl(), owner.token);
    await rename();
    await fresh.until((seen) => seen.some((event) => event.type === "team.settings.updated"));
    fresh.close();
  });
});
