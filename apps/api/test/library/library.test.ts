// The team library end to end, with real Node-RED instances: an entry saved from one instance's
// library panel (Node-RED's own admin API) is read by a second instance of the team, never by
// another team's; scripts reach the same entries under /api/v1/teams/{teamId}/library, by role;
// a signed-in member reaches /storage/library/{teamId}/… as FlowFuse's, deleting too.
import { generateToken, tokenDigest } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { addMember, auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { editorToken, startServer, TOKEN_SECRET, type TestServer } from "../support/harness";
import { waiter } from "../support/until";
import { type Person, teamOfRoles } from "../support/team-of-roles";

let server: TestServer;
/** The team's owner, a member and a viewer of it, and a user of no team of it (teamOfRoles). */
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let otherTeamId: string;
/** Two running instances of the team, one of the other team. */
let first: string;
let second: string;
let foreign: string;

const SOURCE = "flowforge-team-library";
const FLOW = [
  { id: "tab1", type: "tab", label: "Shared" },
  { id: "inj1", type: "inject", z: "tab1", wires: [] },
];

const until = waiter(60_000);

async function createRunning(token: string, team: string, name: string): Promise<string> {
  const app = await server.request("POST", "/api/v1/applications", {
    token,
    body: { name: `${name} app`, teamId: team },
  });
  expect(app.status, app.text).toBe(200);
  const created = await server.request("POST", "/api/v1/projects", {
    token,
    body: { name, applicationId: app.body.id },
  });
  expect(created.status, created.text).toBe(200);
  return created.body.id;
}

async function urlOf(id: string): Promise<string> {
  return until(`instance ${id} running`, async () => {
    // As the platform's administrator, who sees every team's instances.
    const reply = await server.request("GET", `/api/v1/projects/${id}`);
    return reply.body.meta.state === "running" ? (reply.body.url as string) : undefined;
  });
}

/** Instance-bound editor tokens, by instance and the person's own token they were made with. */
const editorTokens = new Map<string, Promise<string>>();

/**
 * A call to an instance's editor admin API as the person whose own token this is: with the
 * instance-bound token a script gets with it (the person's own token never reaches the editor).
 */
async function editor(id: string, personalToken: string, path: string, init: RequestInit = {}) {
  const key = `${id} ${personalToken}`;
  if (!editorTokens.has(key)) {
    editorTokens.set(
      key,
      editorToken(server, id, personalToken).then((created) => created.token),
    );
  }
  const token = await editorTokens.get(key)!;
  return fetch(`${await urlOf(id)}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
}

beforeAll(async () => {
  server = await startServer({ instances: true });
  ({ teamId, owner, member, viewer, outsider } = await teamOfRoles(server, "Library team"));
  const other = await server.request("POST", "/api/v1/teams", {
    token: outsider.token,
    body: { name: "Other team" },
  });
  otherTeamId = other.body.id;
  first = await createRunning(owner.token, teamId, "lib-first");
  second = await createRunning(owner.token, teamId, "lib-second");
  foreign = await createRunning(outsider.token, otherTeamId, "lib-foreign");
  await Promise.all([urlOf(first), urlOf(second), urlOf(foreign)]);
}, 180_000);

afterAll(() => server?.close());

describe("the team library in Node-RED's library panel", { timeout: 120_000 }, () => {
  it("is offered by every instance as the Team Library, without the instance's token", async () => {
    const reply = await editor(first, member.token, "/settings");
    const settings = (await reply.json()) as { libraries: Record<string, unknown>[] };
    const team = settings.libraries.find((library) => library.id === SOURCE);
    expect(team).toMatchObject({ id: SOURCE, label: "Team Library", type: SOURCE });
    expect(JSON.stringify(settings)).not.toMatch(/fpi_/);
    // The person's own token is not an editor's credential.
    const personal = await fetch(`${await urlOf(first)}/settings`, {
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(personal.status).toBe(401);
  });

  it("shows a flow saved from one instance's panel in a second instance of the team", async () => {
    const saved = await editor(
      first,
      member.token,
      `/library/${SOURCE}/flows/shared/starter.json`,
      {
        method: "POST",
        body: JSON.stringify(FLOW),
      },
    );
    expect(saved.status).toBe(204);

    const top = await editor(second, member.token, `/library/${SOURCE}/flows/`);
    expect(await top.json()).toEqual(["shared"]);
    const folder = await editor(second, member.token, `/library/${SOURCE}/flows/shared/`);
    expect(await folder.json()).toEqual([
      expect.objectContaining({ fn: "starter.json", type: "flows" }),
    ]);
    const entry = await editor(
      second,
      member.token,
      `/library/${SOURCE}/flows/shared/starter.json`,
    );
    expect(entry.status).toBe(200);
    expect(await entry.json()).toEqual(FLOW);

    // Scripts see the same entry.
    const viaApi = await server.request(
      "GET",
      `/api/v1/teams/${teamId}/library/entry?type=flows&path=shared/starter.json`,
      { token: viewer.token },
    );
    expect(viaApi.status).toBe(200);
    expect(JSON.parse(viaApi.body.body)).toEqual(FLOW);
  });

  it("is not another team's: its instance's panel shows nothing of it", async () => {
    const top = await editor(foreign, outsider.token, `/library/${SOURCE}/flows/`);
    expect(await top.json()).toEqual([]);
    const entry = await editor(
      foreign,
      outsider.token,
      `/library/${SOURCE}/flows/shared/starter.json`,
    );
    expect(JSON.stringify(await entry.json())).not.toContain("inj1");
    // Nor does the other team's member reach it through the API or /storage/library.
    const api = await server.request(
      "GET",
      `/api/v1/teams/${teamId}/library/entry?type=flows&path=shared/starter.json`,
      { token: outsider.token },
    );
    expect(api.status).toBe(404);
    const storage = await server.request("GET", `/storage/library/${teamId}/shared?type=flows`, {
      token: outsider.token,
    });
    expect(storage.status).toBe(404);
  });

  it("takes a function saved by a script, readable in the panel as text with its meta", async () => {
    const saved = await server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
      token: member.token,
      body: { type: "functions", path: "tools/greet", meta: { outputs: 2 }, body: "return msg;" },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({
      type: "functions",
      path: "tools/greet",
      body: "return msg;",
    });
    const folder = await editor(second, viewer.token, `/library/${SOURCE}/functions/tools`);
    expect(await folder.json()).toEqual([
      expect.objectContaining({ fn: "greet", outputs: 2, type: "functions" }),
    ]);
    const entry = await editor(second, viewer.token, `/library/${SOURCE}/functions/tools/greet`);
    expect(await entry.text()).toBe("return msg;");
  });

  it("deletes an entry or a folder without `type`, as FlowFuse; the editors then read none of it", async () => {
    const save = (type: string, path: string, body: string) =>
      server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
        token: member.token,
        body: { type, path, body },
      });
    expect((await save("flows", "cleanup/a.json", JSON.stringify(FLOW))).status).toBe(200);
    expect((await save("functions", "cleanup/b", "return null;")).status).toBe(200);
    expect((await save("functions", "cleanup/deeper/c", "return 1;")).status).toBe(200);
    expect((await save("templates", "single", "<b>x</b>")).status).toBe(200);
    const before = await editor(second, viewer.token, `/library/${SOURCE}/flows/cleanup/a.json`);
    expect(await before.json()).toEqual(FLOW);

    // A refused delete changes nothing: a viewer's (403), a path with nothing (404).
    const count = async () =>
      (await server.db.selectFrom("team_library_entries").select("path").execute()).length;
    const held = await count();
    const asViewer = await server.request("DELETE", `/storage/library/${teamId}/cleanup`, {
      token: viewer.token,
    });
    expect(asViewer.status).toBe(403);
    const nothing = await server.request("DELETE", `/storage/library/${teamId}/nowhere`, {
      token: member.token,
    });
    expect(nothing.status).toBe(404);
    expect(await count()).toBe(held);

    // A folder, whatever its entries' types; and one entry, named without its type.
    const folder = await server.request("DELETE", `/storage/library/${teamId}/cleanup`, {
      token: member.token,
    });
    expect(folder.status, folder.text).toBe(200);
    expect(folder.body).toEqual({ status: "okay", deleteCount: 3 });
    const single = await server.request(
      "DELETE",
      `/api/v1/teams/${teamId}/library/entry?path=single`,
      {
        token: member.token,
      },
    );
    expect(single.status, single.text).toBe(200);
    expect(single.body).toEqual({ status: "okay", deleteCount: 1 });
    expect(await count()).toBe(held - 4);

    // Node-RED's library reads through /storage/library: nothing of them is left there.
    for (const [type, path] of [
      ["flows", "cleanup/a.json"],
      ["functions", "cleanup/b"],
      ["functions", "cleanup"],
      ["templates", "single"],
    ]) {
      const read = await server.request("GET", `/storage/library/${teamId}/${path}?type=${type}`, {
        token: member.token,
      });
      expect(read.status).toBe(200);
      expect(read.headers.get("x-meta-type"), `${type} ${path}`).toBe("folder");
      expect(read.body, `${type} ${path}`).toEqual([]);
    }
    const top = await editor(second, viewer.token, `/library/${SOURCE}/functions/`);
    expect(await top.json()).not.toContain("cleanup");
    const entry = await editor(second, viewer.token, `/library/${SOURCE}/flows/cleanup/a.json`);
    expect(JSON.stringify(await entry.json())).not.toContain("inj1");
    const deletes = await auditEntries(server.db, { event: "team.library.entry.deleted" });
    expect(deletes.at(-2)?.body).toMatchObject({ entry: { path: "cleanup" }, deleteCount: 3 });
  });

  it("lets a viewer read in the editor but not save", async () => {
    const refused = await editor(first, viewer.token, `/library/${SOURCE}/flows/viewer.json`, {
      method: "POST",
      body: JSON.stringify(FLOW),
    });
    // Node-RED answers a permission it does not grant with 401.
    expect(refused.status).toBe(401);
    const listed = await server.request("GET", `/api/v1/teams/${teamId}/library?type=flows`, {
      token: owner.token,
    });
    expect(listed.body.entries.map((e: { path: string }) => e.path)).toEqual([
      "shared/starter.json",
    ]);
  });
});

describe("/storage/library/{teamId}", () => {
  it("takes an instance's token for its own team only, and never to delete", async () => {
    // A stopped instance of the other team, given a token as a start would give it.
    const stopped = await createRunning(outsider.token, otherTeamId, "lib-stopped");
    await urlOf(stopped);
    const stop = await server.request("POST", `/api/v1/projects/${stopped}/actions/stop`, {
      token: outsider.token,
    });
    expect(stop.status).toBe(200);
    const token = generateToken("instance");
    await server.db
      .updateTable("projects")
      .set({ token_digest: tokenDigest(TOKEN_SECRET, token) })
      .where("id", "=", stopped)
      .execute();
    const own = await server.request("GET", `/storage/library/${otherTeamId}?type=flows`, {
      token,
    });
    expect(own.status).toBe(200);
    expect(own.body).toEqual([]);
    for (const [method, body] of [
      ["GET", undefined],
      ["POST", { type: "flows", body: "[]" }],
      ["DELETE", undefined],
    ] as const) {
      const reply = await server.request(method, `/storage/library/${teamId}/shared/x?type=flows`, {
        token,
        body,
      });
      expect(reply.status, `${method}: ${reply.text}`).toBe(404);
    }
    const del = await server.request("DELETE", `/storage/library/${otherTeamId}/a?type=flows`, {
      token,
    });
    expect(del.status).toBe(403);
    const none = await server.request("GET", `/storage/library/${teamId}?type=flows`, {
      token: null,
    });
    expect(none.status).toBe(404);
  });

  it("lets a signed-in member save, list and delete, from this platform's pages only", async () => {
    const person = await server.userWithPassword();
    await addMember(server.db, { teamId, userId: person.id, role: Role.member });
    const sid = await server.signIn(person.username, person.password);
    const path = `/storage/library/${teamId}/drafts/one.json`;
    const saved = await server.asSession(sid, "POST", path, {
      body: { type: "flows", body: FLOW, meta: {} },
    });
    expect(saved.status, saved.text).toBe(201);
    const fromElsewhere = await server.asSession(sid, "DELETE", `${path}?type=flows`, {
      origin: "https://evil.example",
    });
    expect(fromElsewhere.status).toBe(403);
    const read = await server.asSession(sid, "GET", `${path}?type=flows`);
    expect(read.headers.get("x-meta-type")).toBe("flows");
    expect(read.body).toEqual(FLOW);
    const clash = await server.asSession(sid, "POST", `${path}/below`, {
      body: { type: "flows", body: "[]" },
    });
    expect(clash.status).toBe(400);
    expect(clash.body.code).toBe("invalid_name");
    const deleted = await server.asSession(
      sid,
      "DELETE",
      `/storage/library/${teamId}/drafts?type=flows`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: "okay", deleteCount: 1 });
    const gone = await server.asSession(sid, "DELETE", `${path}?type=flows`);
    expect(gone.status).toBe(404);
  });
});

describe("/api/v1/teams/{teamId}/library", () => {
  it("lets members and owners write, viewers read, and audits every change", async () => {
    const entry = { type: "templates", path: "page", body: "<p>{{payload}}</p>" };
    const asViewer = await server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
      token: viewer.token,
      body: entry,
    });
    expect(asViewer.status).toBe(403);
    const asOwner = await server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
      token: owner.token,
      body: entry,
    });
    expect(asOwner.status).toBe(200);
    const badPath = await server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
      token: owner.token,
      body: { ...entry, path: "../escape" },
    });
    expect(badPath.status).toBe(400);
    const viewerDelete = await server.request(
      "DELETE",
      `/api/v1/teams/${teamId}/library/entry?type=templates&path=page`,
      { token: viewer.token },
    );
    expect(viewerDelete.status).toBe(403);
    const deleted = await server.request(
      "DELETE",
      `/api/v1/teams/${teamId}/library/entry?type=templates&path=page`,
      { token: member.token },
    );
    expect(deleted.body).toEqual({ status: "okay", deleteCount: 1 });
    const missing = await server.request(
      "GET",
      `/api/v1/teams/${teamId}/library/entry?type=templates&path=page`,
      { token: viewer.token },
    );
    expect(missing.status).toBe(404);

    const saves = await auditEntries(server.db, { event: "team.library.entry.saved" });
    expect(saves.some((e) => e.body.instance?.id === first)).toBe(true);
    expect(saves.some((e) => e.actor_id === owner.id && e.body.entry.path === "page")).toBe(true);
    const deletes = await auditEntries(server.db, { event: "team.library.entry.deleted" });
    expect(deletes.some((e) => e.actor_id === member.id && e.team_id === teamId)).toBe(true);
  });

  it("pages through every entry in (type, path) order", async () => {
    for (const name of ["a", "b", "c"]) {
      await server.request("PUT", `/api/v1/teams/${teamId}/library/entry`, {
        token: member.token,
        body: { type: "functions", path: `paged/${name}`, body: name },
      });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const query = `type=functions&path=paged&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await server.request("GET", `/api/v1/teams/${teamId}/library?${query}`, {
        token: viewer.token,
      });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.entries.map((e: { path: string }) => e.path));
      cursor = page.body.meta.next_cursor;
    } while (cursor);
    expect(seen).toEqual(["paged/a", "paged/b", "paged/c"]);
  });
});
