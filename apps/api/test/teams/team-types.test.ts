import { auditEntries, DEFAULT_TEAM_TYPE_ID } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let admin: string;
let user: string;
beforeAll(async () => {
  server = await startServer();
  admin = (await server.user({ admin: true, scope: { adminOptIn: true } })).token;
  user = (await server.user()).token;
});
afterAll(() => server.close());

type TeamType = {
  id: string;
  name: string;
  active: boolean;
  order: number;
  description: string | null;
  properties: Record<string, unknown>;
};

async function createType(body: Record<string, unknown>): Promise<TeamType> {
  const reply = await server.request("POST", "/api/v1/team-types", { token: admin, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as TeamType;
}

describe("GET /api/v1/team-types", () => {
  test("any signed-in user lists the active types, the seeded Starter among them", async () => {
    const reply = await server.request("GET", "/api/v1/team-types", { token: user });
    expect(reply.status).toBe(200);
    expect(reply.body.count).toBe(reply.body.types.length);
    expect(reply.body.types).toContainEqual(
      expect.objectContaining({
        id: DEFAULT_TEAM_TYPE_ID,
        name: "Starter",
        active: true,
        order: 0,
        properties: {
          users: { limit: null },
          instances: { limit: null },
          devices: { limit: null },
          teamBroker: { clients: { limit: null } },
        },
      }),
    );
  });

  test("filter picks active (default), inactive or all types; pages go by order with a cursor", async () => {
    const hidden = await createType({ name: "Retired", active: false, order: 3 });
    const shown = await createType({ name: "Listed", order: 2 });
    const names = async (query: string) => {
      const reply = await server.request("GET", `/api/v1/team-types${query}`, { token: user });
      expect(reply.status, query).toBe(200);
      expect(reply.body.count, query).toBe(reply.body.types.length);
      return reply.body.types.map((t: TeamType) => t.name) as string[];
    };
    expect(await names("")).toContain(shown.name);
    expect(await names("")).not.toContain(hidden.name);
    expect(await names("?filter=inactive")).toContain(hidden.name);
    expect(await names("?filter=inactive")).not.toContain(shown.name);
    const all = await names("?filter=all");
    expect(all).toEqual(expect.arrayContaining([hidden.name, shown.name, "Starter"]));

    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await server.request(
        "GET",
        `/api/v1/team-types?filter=all&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        { token: user },
      );
      expect(reply.status).toBe(200);
      expect(reply.body.count).toBe(all.length);
      expect(reply.body.types).toHaveLength(1);
      paged.push(reply.body.types[0].name);
      cursor = reply.body.meta.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all);
    const orders = await server.request("GET", "/api/v1/team-types?filter=all", { token: user });
    const order = orders.body.types.map((t: TeamType) => t.order);
    expect(order).toEqual([...order].sort((a: number, b: number) => a - b));
  });

  test("a bad filter or limit is 400 naming it", async () => {
    for (const [query, field] of [
      ["filter=some", "filter"],
      ["limit=0", "limit"],
      ["unknown=1", "unknown"],
    ]) {
      const reply = await server.request("GET", `/api/v1/team-types?${query}`, { token: user });
      expect(reply.status, query).toBe(400);
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
  });
});

describe("GET /api/v1/team-types/{teamTypeId}", () => {
  test("any signed-in user reads a type, active or not; an unknown id is 404", async () => {
    const type = await createType({ name: "Readable", active: false, description: "Old plan" });
    const reply = await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: type.id, name: "Readable", active: false });
    const unknown = await server.request("GET", "/api/v1/team-types/AAAAAAAAAAAA", {
      token: user,
    });
    expect(unknown.status).toBe(404);
  });
});

describe("POST /api/v1/team-types", () => {
  test("an administrator's opt-in token creates a type with its limits; platform.team-type.created is logged", async () => {
    const adminUser = await server.user({ admin: true, scope: { adminOptIn: true } });
    const properties = {
      users: { limit: 5 },
      instances: { limit: 2 },
      devices: { limit: null },
      teamBroker: { clients: { limit: 10 } },
      features: { "shared-library": true, fileStorageLimit: 100, tier: "gold" },
    };
    const reply = await server.request("POST", "/api/v1/team-types", {
      token: adminUser.token,
      body: { name: "Team", description: "For teams", order: 5, properties },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      name: "Team",
      description: "For teams",
      active: true,
      order: 5,
      properties,
    });
    expect(reply.body.id).toMatch(/^[A-Za-z0-9]{12}$/);
    const entry = (await auditEntries(server.db, { event: "platform.team-type.created" })).find(
      (e) => (e.body as { teamType: { id: string } }).teamType.id === reply.body.id,
    );
    expect(entry).toMatchObject({
      entity_type: "platform",
      actor_id: adminUser.id,
      token_id: adminUser.tokenId,
      body: { teamType: { id: reply.body.id, name: "Team" } },
    });
  });

  test("without a name or properties it has no limits, active, order 0", async () => {
    const type = await createType({ name: "Plain" });
    expect(type).toMatchObject({ active: true, order: 0, description: null, properties: {} });
  });

  test("plain users, admins without opt-in and read-only admin tokens get 403; nothing is created", async () => {
    const plainAdmin = await server.user({ admin: true });
    const readOnly = await server.user({
      admin: true,
      scope: { adminOptIn: true, readOnly: true },
    });
    for (const [who, token] of [
      ["user", user],
      ["admin without opt-in", plainAdmin.token],
      ["read-only admin", readOnly.token],
    ] as const) {
      const reply = await server.request("POST", "/api/v1/team-types", {
        token,
        body: { name: `Forbidden ${who}` },
      });
      expect(reply.status, who).toBe(403);
    }
    const all = await server.request("GET", "/api/v1/team-types?filter=all", { token: user });
    expect(all.body.types.map((t: TeamType) => t.name)).not.toContain("Forbidden user");
  });

  test("a name taken in any case is 409 invalid_name", async () => {
    await createType({ name: "Enterprise" });
    const clash = await server.request("POST", "/api/v1/team-types", {
      token: admin,
      body: { name: "  ENTERPRISE " },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_name");
    expect(clash.body.errors).toEqual([{ path: "name", message: "Already in use" }]);
  });

  test("bad input is 400 invalid_request naming the field: properties are a strict shape", async () => {
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: " " }, "name"],
      [{ name: "x".repeat(129) }, "name"],
      [{ name: "ok", active: "yes" }, "active"],
      [{ name: "ok", order: 1.5 }, "order"],
      [{ name: "ok", order: -1 }, "order"],
      [{ name: "ok", order: 10_000_000 }, "order"],
      [{ name: "ok", description: "d".repeat(1025) }, "description"],
      [{ name: "ok", extra: 1 }, "extra"],
      [{ name: "ok", properties: [] }, "properties"],
      [{ name: "ok", properties: { users: { limit: -1 } } }, "properties.users.limit"],
      [{ name: "ok", properties: { users: { limit: 2.5 } } }, "properties.users.limit"],
      [{ name: "ok", properties: { users: { limit: "5" } } }, "properties.users.limit"],
      [{ name: "ok", properties: { users: { max: 5 } } }, "properties.users.max"],
      [{ name: "ok", properties: { billing: {} } }, "properties.billing"],
      [{ name: "ok", properties: { teamBroker: {} } }, "properties.teamBroker.clients"],
      [{ name: "ok", properties: { features: { ok: {} } } }, "properties.features.ok"],
      [
        { name: "ok", properties: { features: { "bad key": true } } },
        "properties.features.bad key",
      ],
    ];
    for (const [body, field] of cases) {
      const reply = await server.request("POST", "/api/v1/team-types", { token: admin, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(
        reply.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(field);
    }
    const all = await server.request("GET", "/api/v1/team-types?filter=all", { token: user });
    expect(all.body.types.map((t: TeamType) => t.name)).not.toContain("ok");
  });
});

describe("PUT /api/v1/team-types/{teamTypeId}", () => {
  test("an administrator changes the fields given; properties are replaced; the change is logged", async () => {
    const type = await createType({
      name: "Growing",
      description: "Small",
      properties: { users: { limit: 3 }, devices: { limit: 1 } },
    });
    const reply = await server.request("PUT", `/api/v1/team-types/${type.id}`, {
      token: admin,
      body: { name: "Grown", description: null, order: 7, properties: { users: { limit: 30 } } },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      id: type.id,
      name: "Grown",
      description: null,
      order: 7,
      active: true,
      properties: { users: { limit: 30 } },
    });
    const read = await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user });
    expect(read.body).toEqual(reply.body);
    const entry = (await auditEntries(server.db, { event: "platform.team-type.updated" })).find(
      (e) => (e.body as { teamType: { id: string } }).teamType.id === type.id,
    );
    expect(entry?.body).toMatchObject({
      teamType: { id: type.id, name: "Grown" },
      updates: expect.arrayContaining([
        { key: "name", old: "Growing", new: "Grown" },
        { key: "description", old: "Small", new: null },
      ]),
    });
  });

  test("non-administrators get 403; an unknown type 404; nothing to change 400; a taken name 409", async () => {
    const type = await createType({ name: "Stable" });
    await createType({ name: "Occupied" });
    const forbidden = await server.request("PUT", `/api/v1/team-types/${type.id}`, {
      token: user,
      body: { name: "Hijacked" },
    });
    expect(forbidden.status).toBe(403);
    const unknown = await server.request("PUT", "/api/v1/team-types/AAAAAAAAAAAA", {
      token: admin,
      body: { name: "Ghost" },
    });
    expect(unknown.status).toBe(404);
    const empty = await server.request("PUT", `/api/v1/team-types/${type.id}`, {
      token: admin,
      body: {},
    });
    expect(empty.status).toBe(400);
    const clash = await server.request("PUT", `/api/v1/team-types/${type.id}`, {
      token: admin,
      body: { name: "occupied" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_name");
    const read = await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user });
    expect(read.body.name).toBe("Stable");
  });
});

describe("DELETE /api/v1/team-types/{teamTypeId}", () => {
  test("an administrator deletes an unused type; platform.team-type.deleted is logged", async () => {
    const type = await createType({ name: "Short-lived" });
    const reply = await server.request("DELETE", `/api/v1/team-types/${type.id}`, {
      token: admin,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    const gone = await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user });
    expect(gone.status).toBe(404);
    const again = await server.request("DELETE", `/api/v1/team-types/${type.id}`, {
      token: admin,
    });
    expect(again.status).toBe(404);
    const entry = (await auditEntries(server.db, { event: "platform.team-type.deleted" })).find(
      (e) => (e.body as { teamType: { id: string } }).teamType.id === type.id,
    );
    expect(entry).toMatchObject({ entity_type: "platform", body: { teamType: { id: type.id } } });
  });

  test("a type a team has cannot be deleted (400 invalid_team_type); unused again, it can", async () => {
    const type = await createType({ name: "In Use" });
    const owner = await server.user();
    const team = await server.request("POST", "/api/v1/teams", {
      token: owner.token,
      body: { name: "Typed", type: type.id },
    });
    expect(team.status).toBe(200);
    const refused = await server.request("DELETE", `/api/v1/team-types/${type.id}`, {
      token: admin,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_team_type");
    expect(refused.body.error).toMatch(/in use by 1 team/);
    expect(
      (await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user })).status,
    ).toBe(200);

    const deleted = await server.request("DELETE", `/api/v1/teams/${team.body.id}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(200);
    const now = await server.request("DELETE", `/api/v1/team-types/${type.id}`, { token: admin });
    expect(now.status).toBe(200);
  });

  test("non-administrators get 403, and the type stays", async () => {
    const type = await createType({ name: "Kept" });
    const plainAdmin = await server.user({ admin: true });
    for (const token of [user, plainAdmin.token]) {
      const reply = await server.request("DELETE", `/api/v1/team-types/${type.id}`, { token });
      expect(reply.status).toBe(403);
    }
    expect(
      (await server.request("GET", `/api/v1/team-types/${type.id}`, { token: user })).status,
    ).toBe(200);
  });
});

describe("there is always an active team type", () => {
  test("the last active type can be neither made inactive nor deleted (400 invalid_team_type)", async () => {
    const active = await server.request("GET", "/api/v1/team-types?filter=all", { token: user });
    const keep = await createType({ name: "Last One Standing" });
    const others = (active.body.types as TeamType[]).filter((t) => t.active);
    for (const type of others) {
      const reply = await server.request("PUT", `/api/v1/team-types/${type.id}`, {
        token: admin,
        body: { active: false },
      });
      expect(reply.status, type.name).toBe(200);
    }
    const deactivate = await server.request("PUT", `/api/v1/team-types/${keep.id}`, {
      token: admin,
      body: { active: false },
    });
    expect(deactivate.status).toBe(400);
    expect(deactivate.body.code).toBe("invalid_team_type");
    const remove = await server.request("DELETE", `/api/v1/team-types/${keep.id}`, {
      token: admin,
    });
    expect(remove.status).toBe(400);
    expect(remove.body.code).toBe("invalid_team_type");

    // With one active type left, a new team gets it.
    const owner = await server.user();
    const team = await server.request("POST", "/api/v1/teams", {
      token: owner.token,
      body: { name: "Defaulted" },
    });
    expect(team.body.type).toMatchObject({ id: keep.id, name: "Last One Standing" });

    for (const type of others) {
      await server.request("PUT", `/api/v1/team-types/${type.id}`, {
        token: admin,
        body: { active: true },
      });
    }
  });
});
