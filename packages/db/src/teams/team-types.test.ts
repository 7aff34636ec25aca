// Team types against a real database: a team's queries bring its type, limits are read per team,
// and a type in use cannot be deleted.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isForeignKeyViolation } from "../errors";
import { DEFAULT_TEAM_TYPE_ID } from "../migrations/2026-11-23T1300-team-sharing";
import {
  defaultTeamType,
  deleteTeamType,
  insertTeamType,
  listTeamTypes,
  teamLimits,
} from "./team-types";
import { deleteTeam, findTeamForUser, insertTeam, listTeams, updateTeam } from "./teams";
import { createTestDb, type TestDb } from "../testing/index";
import { findTokenAndTeam, insertToken } from "../tokens";
import { insertUser } from "../accounts/users";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

let n = 0;
const owner = () => insertUser(t.db, { username: `tt${++n}`, name: "U" });

describe("team types", () => {
  test("every query that returns a team brings its type, in the same statement", async () => {
    const user = await owner();
    const type = await insertTeamType(t.db, {
      name: "Limited",
      order: 3,
      properties: { users: { limit: 4 }, features: { ha: true } },
    });
    const expected = {
      id: type.id,
      name: "Limited",
      active: true,
      order: 3,
      description: null,
      properties: { users: { limit: 4 }, features: { ha: true } },
    };
    const team = await insertTeam(t.db, {
      name: "Typed",
      slug: "typed",
      ownerId: user.id,
      ownerRole: 50,
      typeId: type.id,
    });
    expect(team.type).toEqual(expected);
    expect((await findTeamForUser(t.db, team.id, user.id))?.team.type).toEqual(expected);
    const token = await insertToken(t.db, {
      userId: user.id,
      parentId: null,
      name: "t",
      digest: `tt-digest-${n}`,
      scope: { readOnly: false, adminOptIn: false, teamIds: null, expiresAt: null },
    });
    const found = await findTokenAndTeam(t.db, `tt-digest-${n}`, team.id);
    expect(found?.identity.id).toBe(token.id);
    expect(found?.team?.team.type).toEqual(expected);
    const updated = await updateTeam(
      t.db,
      team.id,
      { name: "Renamed" },
      { event: "team.settings.updated", entity: { type: "team", id: team.id }, actor: "system" },
    );
    expect(updated?.type).toEqual(expected);
    const { teams } = await listTeams(t.db, { limit: 1000 }, 1000);
    expect(teams.find((row) => row.id === team.id)?.type).toEqual(expected);
  });

  test("a team without a chosen type has the seeded default; teamLimits reads its properties", async () => {
    const user = await owner();
    const team = await insertTeam(t.db, {
      name: "Plain",
      slug: "plain",
      ownerId: user.id,
      ownerRole: 50,
    });
    expect(team.type.id).toBe(DEFAULT_TEAM_TYPE_ID);
    expect((await defaultTeamType(t.db))?.id).toBe(DEFAULT_TEAM_TYPE_ID);
    expect(await teamLimits(t.db, team.id)).toEqual({
      users: { limit: null },
      instances: { limit: null },
      devices: { limit: null },
      teamBroker: { clients: { limit: null } },
    });
    expect(await teamLimits(t.db, "nosuchteam00")).toBeUndefined();
  });

  test("a type a team has cannot be deleted: the reference refuses it", async () => {
    const user = await owner();
    const type = await insertTeamType(t.db, { name: "Held" });
    const team = await insertTeam(t.db, {
      name: "Holder",
      slug: "holder",
      ownerId: user.id,
      ownerRole: 50,
      typeId: type.id,
    });
    const error = await deleteTeamType(t.db, type.id).catch((e: unknown) => e);
    expect(isForeignKeyViolation(error), String(error)).toBe(true);
    await deleteTeam(t.db, team.id);
    expect((await deleteTeamType(t.db, type.id))?.id).toBe(type.id);
  });

  test("lists filter by active and page in order, then id", async () => {
    await insertTeamType(t.db, { name: "Off", active: false, order: 1 });
    const all = await listTeamTypes(t.db, { limit: 1000, filter: "all" });
    const active = await listTeamTypes(t.db, { limit: 1000, filter: "active" });
    const inactive = await listTeamTypes(t.db, { limit: 1000, filter: "inactive" });
    expect(active.total + inactive.total).toBe(all.total);
    expect(inactive.types.every((row) => !row.active)).toBe(true);
    const first = await listTeamTypes(t.db, { limit: 1, filter: "all" });
    const second = await listTeamTypes(t.db, {
      limit: 1,
      filter: "all",
      cursor: first.nextCursor,
    });
    expect([...first.types, ...second.types].map((row) => row.id)).toEqual(
      all.types.slice(0, 2).map((row) => row.id),
    );
  });
});
