// The team library's limits, through both its doors (the API, and Node-RED's /storage/library as a
// signed-in member calls it): an entry's body, and what a whole team's library may hold, so that no
// team can fill the database. A save past a limit changes nothing.
import { Role } from "@flowplane/contract";
import {
  MAX_LIBRARY_BODY,
  MAX_TEAM_LIBRARY_BYTES,
  MAX_TEAM_LIBRARY_ENTRIES,
} from "@flowplane/contract";
import { addMember, auditEntries } from "@flowplane/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let owner: { id: string; token: string };

beforeAll(async () => {
  server = await startServer();
  owner = await server.user();
});
afterAll(() => server?.close());

async function team() {
  const reply = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: `Library ${Math.random().toString(36).slice(2, 8)}` },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

const save = (teamId: string, path: string, body: string) =>
  server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
    token: owner.token,
    body: { type: "functions", path, body },
  });

/** What a team's library already holds, put there directly (as saves over time would). */
const fill = (teamId: string, entries: number, bodyLength: number) =>
  sql`insert into team_library_entries (team_id, type, path, body)
      select ${teamId}, 'functions', 'filled/' || g, repeat('x', ${bodyLength}::int)
      from generate_series(1, ${entries}::int) g`.execute(server.db);

const countOf = async (teamId: string) =>
  (
    await server.db
      .selectFrom("team_library_entries")
      .select(sql<number>`count(*)::int`.as("n"))
      .where("team_id", "=", teamId)
      .executeTakeFirstOrThrow()
  ).n;

describe("the team library's limits", () => {
  it("an entry's body is at most MAX_LIBRARY_BODY: 400 naming body, and a flow's JSON past it 413 by Node-RED's door", async () => {
    const teamId = await team();
    const tooBig = "x".repeat(MAX_LIBRARY_BODY + 1);
    const byApi = await save(teamId, "big", tooBig);
    expect(byApi.status).toBe(400);
    expect(byApi.body.errors.map((e: { path: string }) => e.path)).toContain("body");
    const person = await server.userWithPassword();
    await addMember(server.db, { teamId, userId: person.id, role: Role.member });
    const sid = await server.signIn(person.username, person.password);
    // Node-RED's door: a text body is checked as the API's; a flow's JSON past it is 413.
    const text = await server.asSession(sid, "POST", `/storage/library/${teamId}/big`, {
      body: { type: "functions", body: tooBig, meta: {} },
    });
    expect(text.status).toBe(400);
    const flow = await server.asSession(sid, "POST", `/storage/library/${teamId}/big`, {
      body: { type: "flows", body: [{ id: "n1", type: "comment", info: tooBig }], meta: {} },
    });
    expect(flow.status).toBe(413);
    expect(flow.body.code).toBe("payload_too_large");
    expect(await countOf(teamId)).toBe(0);
  });

  it("a team's library holds at most MAX_TEAM_LIBRARY_BYTES: a save past it is 413 library_full, and changes nothing", async () => {
    const teamId = await team();
    // Full to within 1,000 bytes.
    const held = MAX_TEAM_LIBRARY_BYTES - 1_000;
    const per = Math.ceil(held / 25);
    await fill(teamId, 25, per);
    await sql`update team_library_entries set body = repeat('x', ${per - (per * 25 - held) - 2}::int)
              where team_id = ${teamId} and path = 'filled/1'`.execute(server.db);
    const past = await save(teamId, "one-more", "y".repeat(2_000));
    expect(past.status, past.text).toBe(413);
    expect(past.body.code).toBe("library_full");
    expect(past.body.error).toContain("delete entries to make room");
    expect(await countOf(teamId)).toBe(25);
    const events = (await auditEntries(server.db, { event: "team.library.entry.saved" })).filter(
      (entry) => entry.team_id === teamId,
    );
    expect(events).toEqual([]);
    // What fits still goes in; replacing an entry counts without what it replaces.
    expect((await save(teamId, "small", "y".repeat(100))).status).toBe(200);
    expect((await save(teamId, "filled/2", "smaller now")).status).toBe(200);
    expect((await save(teamId, "one-more", "y".repeat(2_000))).status).toBe(200);
  });

  it("a team's library holds at most MAX_TEAM_LIBRARY_ENTRIES entries; replacing one still works", async () => {
    const teamId = await team();
    await fill(teamId, MAX_TEAM_LIBRARY_ENTRIES, 1);
    const past = await save(teamId, "new-one", "x");
    expect(past.status, past.text).toBe(413);
    expect(past.body.code).toBe("library_full");
    expect(await countOf(teamId)).toBe(MAX_TEAM_LIBRARY_ENTRIES);
    expect((await save(teamId, "filled/7", "replaced")).status).toBe(200);
    // Another team is not counted with it.
    expect((await save(await team(), "new-one", "x")).status).toBe(200);
  });
});
