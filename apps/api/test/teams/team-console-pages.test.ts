// A team's library, broker, audit log and settings pages over plain HTTP, as a browser without
// script uses them: forms posted URL-encoded with the session cookie, redirects not followed.
// What they do is the API's own doing; checked here: each form works without script, a page
// offers only what the caller's role allows (and the API refuses the rest whatever is posted),
// another team's member gets 404, the API's errors are shown with their status, names are
// escaped, and the audit log's CSV is the page's entries, quoted and guarded against formulas.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PageReply, startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    instances: "in-memory",
    broker: "embedded",
    rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
  });
});
afterAll(() => server.close());

/** A person with a password, signed in. */
async function person() {
  const user = await server.userWithPassword();
  return { ...user, sid: await server.signIn(user.username, user.password) };
}
type Person = Awaited<ReturnType<typeof person>>;

/** A team made by its owner, with a member, a viewer, and an outsider (in a team of their own). */
async function team(name = "Line Ops") {
  const owner = await person();
  const created = await server.asSession(owner.sid, "POST", "/api/v1/teams", { body: { name } });
  expect(created.status, created.text).toBe(200);
  const teamId = created.body.id as string;
  const [member, viewer, outsider] = await Promise.all([person(), person(), person()]);
  await addMember(server.db, { teamId, userId: member.id, role: Role.member });
  await addMember(server.db, { teamId, userId: viewer.id, role: Role.viewer });
  await server.asSession(outsider.sid, "POST", "/api/v1/teams", { body: { name: "Elsewhere" } });
  return { teamId, slug: created.body.slug as string, owner, member, viewer, outsider };
}

const formActions = (page: PageReply) =>
  [...page.html.matchAll(/<form [^>]*?action="([^"]+)"/g)].map((match) => match[1]!);

const get = (path: string, who: Person) => server.page("GET", path, { sid: who.sid });
const post = (path: string, who: Person, form: Record<string, string | string[]> = {}) =>
  server.page("POST", path, { sid: who.sid, form });

test("another team's member gets 404 on every page, form and download", async () => {
  const { teamId, outsider } = await team();
  for (const path of ["library", "broker", "audit-log", "audit-log.csv", "settings"]) {
    const page = await get(`/teams/${teamId}/${path}`, outsider);
    expect(page.status, path).toBe(404);
  }
  for (const path of ["library/entry", "broker/clients", "settings", "delete"]) {
    const page = await post(`/teams/${teamId}/${path}`, outsider, { confirmed: "yes" });
    expect(page.status, path).toBe(404);
  }
});

describe("the library", () => {
  test("a member saves an entry; everyone reads it; viewers cannot change it; a member deletes it", async () => {
    const { teamId, member, viewer } = await team();
    const base = `/teams/${teamId}/library`;
    const body = JSON.stringify([{ id: "n1", type: "inject", name: "<script>x</script>" }]);
    const saved = await post(`${base}/entry`, member, {
      type: "flows",
      path: "line/<b>start",
      body,
    });
    expect(saved.status, saved.html).toBe(303);
    expect(saved.location).toBe(`${base}?done=saved&path=line`);

    const list = await get(`${base}?path=line`, viewer);
    expect(list.status).toBe(200);
    expect(list.html).toContain('aria-current="page">Library</a>');
    expect(list.html).toContain("&lt;b&gt;start");
    expect(list.html).not.toContain("<b>start");
    // A viewer reads, and is offered neither saving nor deleting.
    expect(formActions(list).filter((action) => action !== "/sign-out")).toEqual([base]);
    const top = await get(base, member);
    expect(top.html).toContain(`href="${base}?path=line">line/</a>`);
    expect(formActions(top)).toContain(`${base}/delete`);
    expect(formActions(top)).toContain(`${base}/entry`);

    const entryPath = `${base}/entry?type=flows&path=${encodeURIComponent("line/<b>start")}`;
    const entry = await get(entryPath, viewer);
    expect(entry.status).toBe(200);
    expect(entry.html).toContain("&quot;name&quot;: &quot;&lt;script&gt;x&lt;/script&gt;&quot;");
    expect((await get(`${base}/entry?type=flows&path=nothing`, viewer)).status).toBe(404);

    const refused = await post(`${base}/entry`, viewer, { type: "flows", path: "x", body: "[]" });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('role="alert"');

    // Without script, deleting asks on a page first.
    const asked = await post(`${base}/delete`, member, { type: "flows", path: "line/<b>start" });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("Delete the flows entry “line/&lt;b&gt;start”");
    expect(asked.html).toContain('name="confirmed" value="yes"');
    const deleted = await post(`${base}/delete`, member, {
      type: "flows",
      path: "line/<b>start",
      confirmed: "yes",
    });
    expect(deleted.location).toBe(`${base}?done=deleted`);
    const gone = await post(`${base}/delete`, member, { path: "line", confirmed: "yes" });
    expect(gone.status).toBe(404);
  });

  test("bad input is the API's error, with its status, beside the field", async () => {
    const { teamId, member } = await team();
    const base = `/teams/${teamId}/library`;
    const bad = await post(`${base}/entry`, member, { type: "flows", path: "a//b", body: "[]" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("No empty segment, nor a leading or trailing &#39;/&#39;");
    expect(bad.html).toContain('value="a//b"');
    const filter = await get(`${base}?path=..`, member);
    expect(filter.status).toBe(400);
    expect(filter.html).toContain("No &#39;.&#39; or &#39;..&#39; segment");
  });
});

describe("the broker", () => {
  test("an owner creates a client with ACLs, changes them and deletes it; the password never shows", async () => {
    const { teamId, owner, viewer } = await team();
    const base = `/teams/${teamId}/broker`;
    const page = await get(base, owner);
    const settings = await server.asSession(owner.sid, "GET", "/api/v1/settings");
    expect(page.html).toContain(`<code>${settings.body["team:broker:url"]}</code>`);
    expect(page.html).toContain(`@${teamId}`);

    const created = await post(`${base}/clients`, owner, {
      username: "sensor-1",
      password: "correct horse battery",
      action: ["subscribe", "publish", "both"],
      pattern: ["line/+/in", "line/out", ""],
    });
    expect(created.location, created.html).toBe(`${base}?done=created`);
    const listed = await get(`${base}?done=created`, viewer);
    expect(listed.html).toContain("The client is created.");
    expect(listed.html).toContain("<li>subscribe <code>line/+/in</code></li>");
    expect(listed.html).toContain("<li>publish <code>line/out</code></li>");
    expect(listed.html).not.toContain("correct horse battery");
    expect(formActions(listed).filter((action) => action !== "/sign-out")).toEqual([]);
    const refused = await post(`${base}/clients/sensor-1/delete`, viewer, { confirmed: "yes" });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('role="alert"');
    const notCreated = await post(`${base}/clients`, viewer, {
      username: "mine",
      password: "a long password",
      action: "both",
      pattern: "#",
    });
    expect(notCreated.status).toBe(403);
    expect(notCreated.html).toContain('role="alert"');

    const duplicate = await post(`${base}/clients`, owner, {
      username: "sensor-1",
      password: "another password",
      action: "both",
      pattern: "#",
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.html).toContain("The team already has a client of that name");

    const edit = await get(`${base}/clients/sensor-1`, owner);
    expect(edit.html).toContain('value="line/+/in"');
    const badAcl = await post(`${base}/clients/sensor-1/acls`, owner, {
      action: ["both", "publish"],
      pattern: ["ok/#", "a/#/b"],
    });
    expect(badAcl.status).toBe(400);
    expect(badAcl.html).toContain("&#39;#&#39; must be a whole level, and the last one");
    expect(badAcl.html).toContain('value="a/#/b" maxlength="1024"');
    const changed = await post(`${base}/clients/sensor-1/acls`, owner, {
      action: ["both", "subscribe"],
      pattern: ["plant/#", ""],
    });
    expect(changed.location).toBe(`${base}?done=acls`);
    expect((await get(base, owner)).html).toContain("<li>both <code>plant/#</code></li>");

    const asked = await post(`${base}/clients/sensor-1/delete`, owner);
    expect(asked.html).toContain("Delete the MQTT client “sensor-1”?");
    const deleted = await post(`${base}/clients/sensor-1/delete`, owner, { confirmed: "yes" });
    expect(deleted.location).toBe(`${base}?done=deleted`);
    expect((await get(`${base}/clients/sensor-1`, owner)).status).toBe(404);
  });

  test("a client without ACLs or with a short password is refused with the API's reasons", async () => {
    const { teamId, owner } = await team();
    const bad = await post(`/teams/${teamId}/broker/clients`, owner, {
      username: "x y",
      password: "short",
      action: "both",
      pattern: "",
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("At least 8 characters");
    expect(bad.html).toContain("At least one ACL");
    expect(bad.html).toContain('value="x y"');
    expect(bad.html).not.toContain('value="short"');
  });
});

describe("the audit log", () => {
  test("owners read it newest first, filtered and paged; others are refused", async () => {
    const { teamId, owner, member } = await team();
    for (let i = 0; i < 52; i++) {
      const saved = await server.asSession(
        owner.sid,
        "PUT",
        `/api/v1/teams/${teamId}/library/entry`,
        {
          body: { type: "flows", path: `f/${String(i).padStart(2, "0")}`, body: "[]" },
        },
      );
      expect(saved.status).toBe(200);
    }
    const base = `/teams/${teamId}/audit-log`;
    const first = await get(base, owner);
    expect(first.status).toBe(200);
    expect(first.html).toContain('aria-current="page">Audit log</a>');
    const events = [...first.html.matchAll(/<code>([a-z.-]+)<\/code><\/th>/g)].map((m) => m[1]);
    expect(events).toHaveLength(50);
    expect(events[0]).toBe("team.library.entry.saved");
    expect(first.html).not.toContain("Previous page");
    const next = /href="([^"]+)">Next page/.exec(first.html)![1]!.replaceAll("&amp;", "&");
    const second = await get(next, owner);
    expect(second.html).toContain("team.created");
    expect(second.html).not.toContain("Next page");
    const previous = /href="([^"]+)">Previous page/.exec(second.html)![1]!;
    expect(previous).toBe(base);

    const filtered = await get(`${base}?event=team.created&username=${owner.username}`, owner);
    expect([...filtered.html.matchAll(/<code>team\.created<\/code><\/th>/g)]).toHaveLength(1);
    expect(filtered.html).not.toContain("<code>team.library.entry.saved</code>");
    expect(filtered.html).toContain(
      `href="${base}.csv?event=team.created&amp;username=${owner.username}"`,
    );
    const bad = await get(`${base}?scope=galaxy`, owner);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('role="alert"');

    const refused = await get(base, member);
    expect(refused.status).toBe(403);
    expect(refused.html).not.toContain('aria-current="page">Audit log</a>');
    expect((await get(`${base}.csv`, member)).status).toBe(403);
  });

  test("the CSV holds the same entries, quoted, with formulas made text", async () => {
    const { teamId, owner } = await team('=HYPERLINK("x"), @once');
    const csv = await get(`/teams/${teamId}/audit-log.csv?event=team.created`, owner);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toContain("attachment");
    const lines = csv.html.split("\r\n");
    expect(lines[0]).toBe("time,event,user,resource,resource id,resource name,details");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(lines[1]).toContain(`,team.created,${owner.username},team,${teamId},`);
    // The name starts with "=": a quote first makes it text; its quotes and comma are quoted.
    expect(lines[1]).toContain(`,"'=HYPERLINK(""x""), @once",`);
  });
});

describe("the settings", () => {
  test("an owner renames the team; taken and bad slugs are the API's errors; others read only", async () => {
    const { teamId, owner, member, viewer } = await team();
    const other = await team("Other");
    const base = `/teams/${teamId}/settings`;
    const page = await get(base, owner);
    expect(page.html).toContain('aria-current="page">Settings</a>');
    expect(formActions(page)).toEqual(expect.arrayContaining([base, `/teams/${teamId}/delete`]));
    const slug = `night-${Math.random().toString(36).slice(2, 8)}`;
    const saved = await post(base, owner, { name: "Night <shift>", slug });
    expect(saved.location).toBe(`${base}?done=saved`);
    const after = await get(`${base}?done=saved`, viewer);
    expect(after.html).toContain("The team&#39;s settings are saved.");
    expect(after.html).toContain("Night &lt;shift&gt;");
    expect(after.html).toContain(`<code>${slug}</code>`);
    for (const who of [member, viewer]) {
      const readOnly = await get(base, who);
      expect(formActions(readOnly).filter((action) => action !== "/sign-out")).toEqual([]);
      const refused = await post(base, who, { name: "Mine", slug });
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('role="alert"');
    }

    const taken = await post(base, owner, { name: "Night", slug: other.slug });
    expect(taken.status).toBe(409);
    expect(taken.html).toContain("Slug is already in use");
    const bad = await post(base, owner, { name: "Night", slug: "Not A Slug" });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Only lower-case letters, digits, &#39;-&#39; and &#39;_&#39;");
    expect(bad.html).toContain('value="Not A Slug"');
  });

  test("an owner deletes the team after confirming; a member cannot", async () => {
    const { teamId, owner, member } = await team();
    expect((await post(`/teams/${teamId}/delete`, member, { confirmed: "yes" })).status).toBe(403);
    const asked = await post(`/teams/${teamId}/delete`, owner);
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("with its applications, instances");
    const deleted = await post(`/teams/${teamId}/delete`, owner, { confirmed: "yes" });
    expect(deleted.location).toBe("/teams?done=deleted");
    expect((await get(`/teams/${teamId}/settings`, owner)).status).toBe(404);
  });
});
