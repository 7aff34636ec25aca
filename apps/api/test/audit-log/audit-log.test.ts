// The audit log as owners, administrators and each user read it: who may read which log, entries
// for real actions newest first in FlowFuse's shape, filters, cursor paging, the CSV export, and
// that no secret ever appears in an entry.
import { Role } from "@flowplane/contract";
import { recordAudit } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

let counter = 0;

async function newTeam(token = server.adminToken, name = `Team ${++counter}`) {
  const reply = await server.request("POST", "/api/v1/teams", { token, body: { name } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { id: string; name: string; slug: string };
}

async function rename(teamId: string, name: string, token = server.adminToken) {
  const reply = await server.request("PUT", `/api/v1/teams/${teamId}`, { token, body: { name } });
  expect(reply.status, reply.text).toBe(200);
}

/** A user with a password, created by the administrator, signed in: the session cookie. */
async function signedInUser() {
  const user = await server.userWithPassword();
  const sid = await server.signIn(user.username, user.password);
  const session = (method: string, path: string, body?: unknown) =>
    server.asSession(sid, method, path, { body });
  return { ...user, sid, session };
}

/** RFC 4180 as the export writes it: quoted cells with doubled quotes, CRLF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ",") {
      record.push(cell);
      cell = "";
    } else if (!quoted && c === "\r" && text[i + 1] === "\n") {
      record.push(cell);
      records.push(record);
      record = [];
      cell = "";
      i++;
    } else {
      cell += c;
    }
  }
  return records;
}

describe("who may read which log", () => {
  test("a team's owner reads its log; members and viewers are refused (403), others see no team (404)", async () => {
    const owner = await server.user();
    const team = await newTeam(owner.token);
    const member = await server.user({ teams: [{ id: team.id, role: Role.member }] });
    const viewer = await server.user({ teams: [{ id: team.id, role: Role.viewer }] });
    const stranger = await server.user();
    const path = `/api/v1/teams/${team.id}/audit-log`;

    expect((await server.request("GET", path, { token: owner.token })).status).toBe(200);
    expect((await server.request("GET", `${path}/export`, { token: owner.token })).status).toBe(
      200,
    );
    for (const token of [member.token, viewer.token]) {
      expect((await server.request("GET", path, { token })).status).toBe(403);
      expect((await server.request("GET", `${path}/export`, { token })).status).toBe(403);
    }
    const hidden = await server.request("GET", path, { token: stranger.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe("not_found");
    expect((await server.request("GET", `${path}/export`, { token: stranger.token })).status).toBe(
      404,
    );
    // An unknown team looks the same as someone else's.
    const unknown = await server.request("GET", "/api/v1/teams/nosuchteam00/audit-log", {
      token: owner.token,
    });
    expect(unknown.status).toBe(404);
  });

  test("the platform log takes an administrator's token with admin opt-in; a plain token is 403", async () => {
    expect((await server.request("GET", "/api/v1/admin/audit-log")).status).toBe(200);
    expect((await server.request("GET", "/api/v1/admin/audit-log/export")).status).toBe(200);

    const plainAdmin = await server.user({ admin: true });
    const user = await server.user();
    for (const token of [plainAdmin.token, user.token]) {
      const reply = await server.request("GET", "/api/v1/admin/audit-log", { token });
      expect(reply.status).toBe(403);
      expect(
        (await server.request("GET", "/api/v1/admin/audit-log/export", { token })).status,
      ).toBe(403);
    }
  });

  test("without a token nothing is readable (401)", async () => {
    for (const path of ["/api/v1/user/audit-log", "/api/v1/admin/audit-log/export"]) {
      expect((await server.request("GET", path, { token: null })).status).toBe(401);
    }
  });

  test("each user reads their own account's log, and only their own", async () => {
    const ada = await signedInUser();
    const bob = await signedInUser();

    const own = await ada.session("GET", "/api/v1/user/audit-log");
    expect(own.status, own.text).toBe(200);
    const events = own.body.log.map((e: any) => e.event);
    expect(events).toEqual(["account.login", "users.created-user"]);
    expect(own.body.log.every((e: any) => e.scope.id === ada.id)).toBe(true);
    expect(own.text).not.toContain(bob.id);

    // A read-only token reads it too: reading is not a change.
    const readOnly = await server.user({ scope: { readOnly: true } });
    expect(
      (await server.request("GET", "/api/v1/user/audit-log", { token: readOnly.token })).status,
    ).toBe(200);
  });
});

describe("entries", () => {
  test("real actions appear newest first, in FlowFuse's shape", async () => {
    const owner = await server.user();
    const team = await newTeam(owner.token, "Shape Team");
    await rename(team.id, "Shape Team Renamed", owner.token);

    const reply = await server.request("GET", `/api/v1/teams/${team.id}/audit-log`, {
      token: owner.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.meta).toEqual({});
    expect(reply.body.count).toBe(2);
    const [renamed, created] = reply.body.log;
    expect(renamed.event).toBe("team.settings.updated");
    expect(created).toEqual({
      id: expect.any(String),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      username: expect.stringMatching(/^user/),
      event: "team.created",
      source: "api",
      scope: { id: team.id, type: "team" },
      trigger: { id: owner.id, type: "user", name: created.username },
      body: expect.objectContaining({
        team: { id: team.id, name: "Shape Team", slug: team.slug },
      }),
    });
    expect(Date.parse(renamed.createdAt)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));
  });

  test("what the platform did itself has a system trigger and no username", async () => {
    const reply = await server.request("GET", "/api/v1/admin/audit-log?event=users.created-user");
    const first = reply.body.log.at(-1);
    // The first administrator is created at first start, by the platform.
    expect(first).toMatchObject({
      username: null,
      source: "system",
      trigger: { id: null, type: "system", name: "Flowplane Platform" },
      scope: { type: "user" },
    });
  });

  test("the platform log holds account events and no team's", async () => {
    const user = await signedInUser();
    const team = await newTeam();
    const reply = await server.request("GET", "/api/v1/admin/audit-log?limit=1000");
    const entries = reply.body.log as any[];
    expect(entries.some((e) => e.event === "account.login" && e.scope.id === user.id)).toBe(true);
    expect(entries.some((e) => e.scope.id === team.id)).toBe(false);
    expect(entries.every((e) => ["platform", "user"].includes(e.scope.type))).toBe(true);
  });

  test("an administrator's own log has the accounts they changed, and the user's log the change", async () => {
    const user = await signedInUser();
    const mine = await server.request("GET", "/api/v1/user/audit-log?event=users.created-user");
    expect(mine.body.log.some((e: any) => e.scope.id === user.id)).toBe(true);
    const theirs = await user.session("GET", "/api/v1/user/audit-log?event=users.created-user");
    expect(theirs.body.log).toHaveLength(1);
    expect(theirs.body.count).toBe(1);
  });
});

describe("filters", () => {
  let owner: { id: string; token: string };
  let other: { id: string; token: string; username: string };
  let team: { id: string };
  beforeAll(async () => {
    owner = await server.user();
    team = await newTeam(owner.token, "Filter Team");
    const secondOwner = await server.user({ teams: [{ id: team.id, role: Role.owner }] });
    const row = await server.db
      .selectFrom("users")
      .select("username")
      .where("id", "=", secondOwner.id)
      .executeTakeFirstOrThrow();
    other = { ...secondOwner, username: row.username };
    await rename(team.id, "Filter 100% Team_a", owner.token);
    await rename(team.id, "Filter Team by another", other.token);
    await server.db.transaction().execute((trx) =>
      recordAudit(trx, {
        event: "team.user.added",
        entity: { type: "team", id: team.id },
        teamId: team.id,
        actor: "system",
        body: { note: "added by the platform" },
      }),
    );
  });

  const log = async (query: string) => {
    const reply = await server.request("GET", `/api/v1/teams/${team.id}/audit-log${query}`, {
      token: owner.token,
    });
    expect(reply.status, reply.text).toBe(200);
    return reply.body as { count: number; log: any[] };
  };

  test("event: one name, or several by repeating the parameter", async () => {
    expect((await log("?event=team.created")).log.map((e) => e.event)).toEqual(["team.created"]);
    const two = await log("?event=team.created&event=team.user.added");
    expect(two.log.map((e) => e.event)).toEqual(["team.user.added", "team.created"]);
    expect(two.count).toBe(2);
    expect((await log("?event=nothing.like.this")).log).toEqual([]);
  });

  test("username: exactly the acting user's", async () => {
    const byOther = await log(`?username=${other.username}`);
    expect(byOther.log.map((e) => e.body.team?.name ?? e.body)).toHaveLength(1);
    expect(byOther.log[0].trigger.id).toBe(other.id);
    expect((await log(`?username=${other.username.slice(0, -1)}`)).log).toEqual([]);
  });

  test("query: part of the event, body, username or name, in any case; LIKE's wildcards are literal", async () => {
    expect((await log("?query=USER.ADDED")).log.map((e) => e.event)).toEqual(["team.user.added"]);
    expect((await log("?query=by%20the%20PLATFORM")).log).toHaveLength(1);
    expect((await log(`?query=${other.username.toUpperCase()}`)).log).toHaveLength(1);
    // Both owners are called "Test User"; the platform's entry has no user.
    expect((await log("?query=test%20user")).log).toHaveLength(3);
    // The name is in the first rename's `new` and the second's `old`.
    expect((await log("?query=100%25")).log).toHaveLength(2);
    expect((await log("?query=%25%25")).log).toEqual([]);
    expect((await log("?query=m_a")).log).toHaveLength(2);
    expect((await log("?query=r_a")).log).toEqual([]);
  });

  test("scope: entries about the team itself; the areas to come have none yet", async () => {
    expect((await log("?scope=team")).log).toHaveLength(4);
    for (const scope of ["application", "project", "device"]) {
      expect((await log(`?scope=${scope}`)).log).toEqual([]);
    }
    const bad = await server.request("GET", `/api/v1/teams/${team.id}/audit-log?scope=galaxy`, {
      token: owner.token,
    });
    expect(bad.status).toBe(400);
  });

  test("unknown parameters, and too many events, are refused (400)", async () => {
    const path = `/api/v1/teams/${team.id}/audit-log`;
    const unknown = await server.request("GET", `${path}?includeEverything=1`, {
      token: owner.token,
    });
    expect(unknown.status).toBe(400);
    const many = Array.from({ length: 51 }, (_, i) => `event=e${i}`).join("&");
    expect((await server.request("GET", `${path}?${many}`, { token: owner.token })).status).toBe(
      400,
    );
  });
});

describe("paging", () => {
  let owner: { token: string };
  let team: { id: string };
  beforeAll(async () => {
    owner = await server.user();
    team = await newTeam(owner.token);
    // Many entries in the same instant too: the id orders them.
    await server.db
      .insertInto("audit_log")
      .values(
        Array.from({ length: 45 }, (_, i) => ({
          id: `page${String(i).padStart(8, "0")}`,
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 5)),
          event: "team.settings.updated",
          entity_type: "team",
          entity_id: team.id,
          team_id: team.id,
          actor_id: null,
          source: "system",
          token_id: null,
          body: JSON.stringify({ i }),
        })),
      )
      .execute();
  });

  test("cursor pages go back in time with no duplicate and no gap", async () => {
    const all = await server.request("GET", `/api/v1/teams/${team.id}/audit-log?limit=1000`, {
      token: owner.token,
    });
    expect(all.body.log).toHaveLength(46);
    expect(all.body.count).toBe(46);
    expect(all.body.meta).toEqual({});

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await server.request(
        "GET",
        `/api/v1/teams/${team.id}/audit-log?limit=7${cursor ? `&cursor=${cursor}` : ""}`,
        { token: owner.token },
      );
      expect(reply.status).toBe(200);
      expect(reply.body.count).toBe(46);
      seen.push(...reply.body.log.map((e: any) => e.id));
      cursor = reply.body.meta.next_cursor;
      if (cursor) expect(cursor).toBe(reply.body.log.at(-1).id);
      pages++;
    } while (cursor);
    expect(pages).toBe(7);
    expect(seen).toEqual(all.body.log.map((e: any) => e.id));
    const times = all.body.log.map((e: any) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  test("a full last page says there is no more", async () => {
    const first = await server.request("GET", `/api/v1/teams/${team.id}/audit-log?limit=23`, {
      token: owner.token,
    });
    const second = await server.request(
      "GET",
      `/api/v1/teams/${team.id}/audit-log?limit=23&cursor=${first.body.meta.next_cursor}`,
      { token: owner.token },
    );
    expect(second.body.log).toHaveLength(23);
    expect(second.body.meta).toEqual({});
  });

  test("limit defaults to 100 and must be 1 to 1000 (else 400)", async () => {
    const path = `/api/v1/teams/${team.id}/audit-log`;
    for (const limit of ["0", "1001", "-1", "2.5", "many"]) {
      const reply = await server.request("GET", `${path}?limit=${limit}`, { token: owner.token });
      expect(reply.status, limit).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
    expect((await server.request("GET", `${path}?limit=1000`, { token: owner.token })).status).toBe(
      200,
    );
  });

  test("a cursor of no entry gives an empty page", async () => {
    const reply = await server.request(
      "GET",
      `/api/v1/teams/${team.id}/audit-log?cursor=nosuchentry0`,
      { token: owner.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.log).toEqual([]);
  });
});

describe("the CSV export", () => {
  test("header, JSON cells, CSV quoting of commas, quotes and newlines, CRLF line ends", async () => {
    const owner = await server.user();
    const team = await newTeam(owner.token, "Export Team");
    const awkward = 'Plant, "North"\nline two';
    await rename(team.id, awkward, owner.token);

    const reply = await server.request("GET", `/api/v1/teams/${team.id}/audit-log/export`, {
      token: owner.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(reply.text.startsWith("id,event,body,scope,trigger,createdAt\r\n")).toBe(true);
    expect(reply.text.endsWith("\r\n")).toBe(true);
    expect(reply.text.replace(/\r\n/g, "")).not.toContain("\n");

    const list = await server.request("GET", `/api/v1/teams/${team.id}/audit-log`, {
      token: owner.token,
    });
    const [header, ...rows] = parseCsv(reply.text);
    expect(header).toEqual(["id", "event", "body", "scope", "trigger", "createdAt"]);
    expect(rows).toHaveLength(2);
    rows.forEach((row, i) => {
      const entry = list.body.log[i];
      expect(row.map((cell) => JSON.parse(cell))).toEqual([
        entry.id,
        entry.event,
        entry.body,
        entry.scope,
        entry.trigger,
        entry.createdAt,
      ]);
    });
    expect(JSON.parse(rows[0]![2]!).updates[0].new).toBe(awkward);
    // The quoting itself, as a spreadsheet reads it: the cell in quotes, inner quotes doubled.
    expect(reply.text).toContain(`"""team.settings.updated"""`);
    expect(reply.text).toContain(String.raw`"Plant, \""North\""\nline two"`);
  });

  test("takes the list's filters", async () => {
    const reply = await server.request(
      "GET",
      "/api/v1/admin/audit-log/export?event=account.login&limit=1",
    );
    const rows = parseCsv(reply.text);
    expect(rows).toHaveLength(2);
    expect(JSON.parse(rows[1]![1]!)).toBe("account.login");
  });
});

describe("secrets", () => {
  test("no token value or password appears in any entry or export", async () => {
    const user = await signedInUser();
    const team = await newTeam();
    const created = await user.session("POST", "/api/v1/user/tokens", { name: "ci" });
    expect(created.status, created.text).toBe(200);
    const token = created.body.token as string;
    const teamToken = await server.request("POST", "/api/v1/user/tokens", {
      body: { name: "team", teamIds: [team.id] },
    });
    const changed = await user.session("PUT", "/api/v1/user/change_password", {
      old_password: user.password,
      password: "a brand new secret phrase",
    });
    expect(changed.status, changed.text).toBe(200);
    await server.request("PUT", `/api/v1/user/tokens/${created.body.id}`, {
      token,
      body: { name: "ci renamed" },
    });

    const texts = await Promise.all(
      [
        "/api/v1/user/audit-log?limit=1000",
        "/api/v1/user/audit-log/export?limit=1000",
        "/api/v1/admin/audit-log?limit=1000",
        "/api/v1/admin/audit-log/export?limit=1000",
        `/api/v1/teams/${team.id}/audit-log/export`,
      ].map(async (path) => {
        const reply = await (path.startsWith("/api/v1/user/")
          ? user.session("GET", path)
          : server.request("GET", path));
        expect(reply.status, path).toBe(200);
        return reply.text;
      }),
    );
    const own = texts[0]!;
    expect(own).toContain("user.pat.created");
    expect(own).toContain("user.updated-password");
    for (const text of texts) {
      for (const secret of [
        token,
        teamToken.body.token,
        server.adminToken,
        user.password,
        "a brand new secret phrase",
        user.sid,
      ]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toContain("scrypt$");
      expect(text).not.toMatch(/fp[ps]_[A-Za-z0-9]{30}/);
    }
  });
});
