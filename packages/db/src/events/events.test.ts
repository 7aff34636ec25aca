// Events in order: audit entries become events in their change's transaction, the sequencer
// numbers committed ones in the order they were written, each once, whatever runs it concurrently.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { recordAudit } from "../audit-log/record";
import { createTestDb, type TestDb } from "../testing/index";
import { insertUser } from "../accounts/users";
import { listEvents, latestEventSeq, pruneEvents, prunedThrough } from "./read";
import { recordEvent } from "./record";
import { sequenceEvents } from "./sequencer";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

const teamId = "team-events";

describe("events", () => {
  test("an audit entry is an event; a rolled-back one is not; numbering follows writing", async () => {
    const user = await insertUser(t.db, { username: "events-user", name: "E" });
    await recordAudit(t.db, {
      event: "team.settings.updated",
      entity: { type: "team", id: teamId },
      teamId,
      actor: { userId: user.id, tokenId: null },
      body: { team: { name: "after" } },
    });
    await t.db
      .transaction()
      .execute(async (trx) => {
        await recordEvent(trx, {
          type: "device.online",
          teamId,
          entity: { type: "device", id: "d1" },
        });
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    await recordEvent(t.db, {
      type: "device.offline",
      teamId,
      entity: { type: "device", id: "d1" },
    });
    // Not yet numbered: no reader sees them.
    expect(await listEvents(t.db, { teamId, limit: 10 })).toEqual([]);
    const seen: string[] = [];
    const numbered = await sequenceEvents(t.db, [
      async (_trx, events) => {
        for (const e of events) seen.push(e.type);
      },
    ]);
    expect(numbered.map((e) => e.type)).toEqual(["team.settings.updated", "device.offline"]);
    expect(seen).toEqual(["team.settings.updated", "device.offline"]);
    expect(await sequenceEvents(t.db)).toEqual([]);
    const listed = await listEvents(t.db, { teamId, limit: 10 });
    expect(listed.map((e) => e.type)).toEqual(["team.settings.updated", "device.offline"]);
    expect(listed[0]!.data).toEqual({ team: { name: "after" } });
    expect(listed[0]!.actorId).toBe(user.id);
    expect(BigInt(listed[1]!.seq)).toBeGreaterThan(BigInt(listed[0]!.seq));
    const after = await listEvents(t.db, { teamId, after: BigInt(listed[0]!.seq), limit: 10 });
    expect(after.map((e) => e.type)).toEqual(["device.offline"]);
    expect((await listEvents(t.db, { teamId, types: ["device.offline"], limit: 10 })).length).toBe(
      1,
    );
    expect(await latestEventSeq(t.db)).toBe(BigInt(listed[1]!.seq));
  });

  test("concurrent sequencers number each event once", async () => {
    for (let i = 0; i < 50; i++) {
      await recordEvent(t.db, {
        type: "x.concurrent",
        teamId,
        entity: { type: "team", id: teamId },
      });
    }
    const runs = await Promise.all([1, 2, 3, 4].map(() => sequenceEvents(t.db)));
    // Whoever did not get the lock numbered nothing; what is left is numbered by the next run.
    let total = runs.flat().length;
    for (;;) {
      const more = await sequenceEvents(t.db);
      if (more.length === 0) break;
      total += more.length;
    }
    expect(total).toBe(50);
    const { rows } = await sql<{ n: string }>`
      select count(distinct seq)::text as n from events where type = 'x.concurrent'`.execute(t.db);
    expect(rows[0]!.n).toBe("50");
  });

  test("retention removes old events and says through where", async () => {
    const before = await latestEventSeq(t.db);
    const removed = await pruneEvents(t.db, new Date(Date.now() + 60_000));
    expect(removed).toBeGreaterThan(0);
    expect(await prunedThrough(t.db)).toBe(before);
    expect(await latestEventSeq(t.db)).toBe(before);
    expect(await listEvents(t.db, { teamId, limit: 10 })).toEqual([]);
  });
});

describe("a consumer that fails", () => {
  test("loses its own work, not the numbering nor the other consumers'", async () => {
    await recordEvent(t.db, { type: "x.failing", teamId, entity: { type: "team", id: teamId } });
    const heard: string[] = [];
    const errors: unknown[] = [];
    const numbered = await sequenceEvents(
      t.db,
      [
        async (trx) => {
          await sql`insert into event_retention (id, pruned_through) values (2, 0)`.execute(trx);
          throw new Error("a consumer's bug");
        },
        async (_trx, events) => {
          for (const e of events) heard.push(e.type);
        },
      ],
      (error) => errors.push(error),
    );
    expect(numbered.map((e) => e.type)).toEqual(["x.failing"]);
    expect(heard).toEqual(["x.failing"]);
    expect(errors).toHaveLength(1);
    const { rows } = await sql`select id from event_retention where id = 2`.execute(t.db);
    expect(rows).toEqual([]);
  });
});
