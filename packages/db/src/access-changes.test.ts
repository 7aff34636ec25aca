// The access feed on PostgreSQL: what notifies it, what does not, and its barrier.
import type { TokenScope } from "@flowplane/auth";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type AccessFeed, accessFeed } from "./access-changes";
import { insertUser } from "./accounts/users";
import { insertTeam } from "./teams/teams";
import { createTestDb, type TestDb, testServerUrl } from "./testing/index";
import { deleteExpiredTokens, insertToken, touchTokens } from "./tokens";

const open: TokenScope = { readOnly: false, adminOptIn: false, teamIds: null, expiresAt: null };

describe.runIf(testServerUrl)("the access feed", () => {
  let t: TestDb;
  let feed: AccessFeed;
  beforeAll(async () => {
    t = await createTestDb();
    feed = accessFeed(t.db)!;
    await feed.ready();
  });
  afterAll(() => t.drop());

  /** Whether `change` was heard by the next barrier. */
  async function heard(change: () => Promise<unknown>): Promise<boolean> {
    expect(await feed.barrier()).toBe(true);
    const before = feed.generation;
    await change();
    expect(await feed.barrier()).toBe(true);
    return feed.generation !== before;
  }

  test("hears every change a token's lookup could see, and not the rest", async () => {
    const user = await insertUser(t.db, { username: "feed", name: "F" });
    const other = await insertUser(t.db, { username: "feed-other", name: "O" });
    const token = await insertToken(t.db, {
      userId: user.id,
      parentId: null,
      name: "t",
      digest: "feed-digest",
      scope: open,
    });
    const team = await insertTeam(t.db, {
      name: "Feed",
      slug: "feed",
      ownerId: user.id,
      ownerRole: 50,
    });
    const db = t.db;
    expect(
      await heard(() =>
        db.updateTable("teams").set({ name: "Renamed" }).where("id", "=", team.id).execute(),
      ),
    ).toBe(true);
    expect(
      await heard(() =>
        db
          .insertInto("team_members")
          .values({ team_id: team.id, user_id: other.id, role: 30 })
          .execute(),
      ),
    ).toBe(true);
    expect(
      await heard(() =>
        db.updateTable("users").set({ suspended: true }).where("id", "=", user.id).execute(),
      ),
    ).toBe(true);
    expect(
      await heard(() =>
        db
          .updateTable("access_tokens")
          .set({ read_only: true })
          .where("id", "=", token.id)
          .execute(),
      ),
    ).toBe(true);
    // Not heard: when a token was last used, and a statement that changes no row.
    expect(await heard(() => touchTokens(db, new Map([[token.id, new Date()]])))).toBe(false);
    expect(await heard(() => deleteExpiredTokens(db))).toBe(false);
    // A deletion that cascades from the user to the token and the membership.
    expect(await heard(() => db.deleteFrom("users").where("id", "=", other.id).execute())).toBe(
      true,
    );
  });

  test("hears a change made by a session whose search path is elsewhere", async () => {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.db);
    const schema = rows[0]!.schema;
    const client = new pg.Client({ connectionString: testServerUrl });
    await client.connect();
    try {
      expect(
        await heard(() =>
          client.query(`update "${schema}".team_types set name = name || ' (renamed)'`),
        ),
      ).toBe(true);
    } finally {
      await client.end();
    }
  });

  test("a barrier after another connection's commit has always heard it", async () => {
    const user = await insertUser(t.db, { username: "barrier", name: "B" });
    for (let round = 0; round < 50; round++) {
      const before = feed.generation;
      await t.db
        .updateTable("users")
        .set({ name: `B${round}` })
        .where("id", "=", user.id)
        .execute();
      expect(await feed.barrier()).toBe(true);
      expect(feed.generation).toBeGreaterThan(before);
    }
  });

  test("closed, it is down and its barrier answers false", async () => {
    const other = accessFeed(t.db)!;
    await other.ready();
    expect(other.live).toBe(true);
    await other.close();
    expect(other.live).toBe(false);
    expect(await other.barrier()).toBe(false);
  });
});
