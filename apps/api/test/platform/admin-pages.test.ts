// The administrators' pages over plain HTTP, as a browser without script uses them: every form of
// /admin/… posted URL-encoded with an administrator's session (users, the catalogue, settings),
// the API's errors shown on the page with its status, and a person who is not an administrator
// refused (the API's 403, as a page) on every page and form, with nothing changed.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PageReply, startServer, type TestServer } from "../support/harness";

let server: TestServer;
let admin: Person;
beforeAll(async () => {
  server = await startServer({ rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } } });
  admin = await person({ admin: true });
});
afterAll(() => server.close());

async function person(options: { admin?: boolean; name?: string } = {}) {
  const user = await server.userWithPassword(options);
  return { ...user, sid: await server.signIn(user.username, user.password) };
}
type Person = Awaited<ReturnType<typeof person>>;

const get = (who: Person, path: string) => server.page("GET", path, { sid: who.sid });
const post = (who: Person, path: string, form: Record<string, string> = {}) =>
  server.page("POST", path, { sid: who.sid, form });

/** The forms of a page: their actions. */
const formActions = (page: PageReply) =>
  [...page.html.matchAll(/<form [^>]*?action="([^"]+)"/g)].map((match) => match[1]!);

const PAGES = [
  "/admin",
  "/admin/users",
  "/admin/teams",
  "/admin/team-types",
  "/admin/instance-types",
  "/admin/stacks",
  "/admin/templates",
  "/admin/settings",
  "/admin/audit-log",
];

async function userOf(id: string) {
  return (await server.request("GET", `/api/v1/users/${id}`)).body;
}

describe("administrators' pages", () => {
  test("an administrator sees the Admin link and every page, each with its tab", async () => {
    const teams = await get(admin, "/teams");
    expect(teams.html).toContain('<a href="/admin">Admin</a>');
    for (const path of PAGES) {
      const page = await get(admin, path);
      expect(page.status, `${path}: ${page.html}`).toBe(200);
      expect(page.html).toContain('<a href="/admin" aria-current="page">Admin</a>');
      expect(page.html).toContain(`<a href="${path}" aria-current="page">`);
      expect(page.html.match(/<h1>/g)).toHaveLength(1);
    }
    const overview = await get(admin, "/admin");
    expect(overview.html).toContain("Users</dt>");
  });

  test("without a session, sign in first", async () => {
    const page = await server.page("GET", "/admin/users");
    expect(page.status).toBe(303);
    expect(page.location).toBe("/sign-in?next=%2Fadmin%2Fusers");
  });

  test("a person who is not an administrator has no Admin link and is refused everywhere, changing nothing", async () => {
    const someone = await person();
    const teams = await get(someone, "/teams");
    expect(teams.html).not.toContain('href="/admin"');
    for (const path of PAGES) {
      const page = await get(someone, path);
      expect(page.status, path).toBe(403);
      expect(page.html).toContain("<h1>Administrators only</h1>");
      expect(page.html).not.toContain('href="/admin"');
    }
    const typeId = (await server.request("GET", "/api/v1/team-types")).body.types[0].id as string;
    const forms: [string, Record<string, string>][] = [
      ["/admin/users", { username: "sneaky", name: "Sneaky", password: "a long enough one 1" }],
      // Their own account: the API would let them change or delete it elsewhere, not here.
      [`/admin/users/${someone.id}/make-admin`, {}],
      [`/admin/users/${someone.id}/delete`, { confirmed: "yes" }],
      [`/admin/users/${admin.id}/suspend`, {}],
      [`/admin/users/${admin.id}/expire-password`, {}],
      ["/admin/settings", {}],
      ["/admin/team-types", { name: "Sneaky type" }],
      [`/admin/team-types/${typeId}`, { name: "Renamed" }],
      [`/admin/team-types/${typeId}/delete`, { confirmed: "yes" }],
      ["/admin/stacks", { name: "sneaky", properties: '{"nodered":"4.1.15"}' }],
    ];
    for (const [path, form] of forms) {
      const reply = await post(someone, path, form);
      expect(reply.status, path).toBe(403);
      expect(reply.html).toContain("<h1>Administrators only</h1>");
    }
    expect(await userOf(someone.id)).toMatchObject({ admin: false });
    expect(await userOf(admin.id)).toMatchObject({ admin: true, suspended: false });
    expect((await userOf(admin.id)).password_expired).toBeUndefined();
    const settings = await server.request("GET", "/api/v1/settings");
    expect(settings.body["team:create"]).toBe(true);
    const types = await server.request("GET", "/api/v1/team-types?filter=all");
    expect(types.body.types.map((t: { name: string }) => t.name)).not.toContain("Sneaky type");
  });
});

describe("users", () => {
  test("an administrator creates a user; a weak password is the API's error, the form kept", async () => {
    const weak = await post(admin, "/admin/users", {
      username: "nina",
      name: "Nina",
      email: "nina@example.com",
      password: "short",
    });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain('role="alert"');
    expect(weak.html).toContain('id="user-password-error"');
    expect(weak.html).toContain('value="nina@example.com"');
    expect(weak.html).not.toContain('value="short"');

    const created = await post(admin, "/admin/users", {
      username: "nina",
      name: "Nina <Ops>",
      email: "nina@example.com",
      password: "a long enough password",
      admin: "on",
    });
    expect(created.status, created.html).toBe(303);
    expect(created.location).toBe("/admin/users?done=created");
    const list = await get(admin, "/admin/users?q=NINA&done=created");
    expect(list.html).toContain("The user is created.");
    expect(list.html).toContain("Nina &lt;Ops&gt;");
    expect(list.html).toContain("1 user match");
    const nina = (await server.request("GET", "/api/v1/users?query=nina")).body.users[0];
    expect(nina).toMatchObject({ username: "nina", admin: true });

    const taken = await post(admin, "/admin/users", {
      username: "nina",
      name: "Nina again",
      password: "a long enough password",
    });
    expect(taken.status).toBe(400);
    expect(taken.html).toContain('id="user-username-error"');
  });

  test("suspend, unsuspend, admin on and off, expire the password, delete (asked first without script)", async () => {
    const someone = await person({ name: "Sam Someone" });
    const base = `/admin/users/${someone.id}`;
    const list = await get(admin, `/admin/users?q=${someone.username}`);
    expect(formActions(list)).toEqual(
      expect.arrayContaining([
        `${base}/suspend`,
        `${base}/make-admin`,
        `${base}/expire-password`,
        `${base}/delete`,
      ]),
    );
    const steps: [string, string, Record<string, unknown>][] = [
      ["suspend", "suspended", { suspended: true }],
      ["unsuspend", "unsuspended", { suspended: false }],
      ["make-admin", "admin", { admin: true }],
      ["remove-admin", "unadmin", { admin: false }],
      ["expire-password", "expired", { password_expired: true }],
    ];
    for (const [action, done, state] of steps) {
      const reply = await post(admin, `${base}/${action}`);
      expect(reply.status, `${action}: ${reply.html}`).toBe(303);
      expect(reply.location).toBe(`/admin/users?done=${done}`);
      expect(await userOf(someone.id)).toMatchObject(state);
    }
    const after = await get(admin, `/admin/users?q=${someone.username}`);
    expect(after.html).toContain("password expired");

    const ask = await post(admin, `${base}/delete`);
    expect(ask.status).toBe(200);
    expect(ask.html).toContain(`Delete Sam Someone (${someone.username})?`);
    expect(ask.html).toContain('name="confirmed" value="yes"');
    const deleted = await post(admin, `${base}/delete`, { confirmed: "yes" });
    expect(deleted.location).toBe("/admin/users?done=deleted");
    const gone = await server.request("GET", `/api/v1/users/${someone.id}`);
    expect(gone.status).toBe(404);
    // A user that is no more: the API's 404.
    const again = await post(admin, `${base}/suspend`);
    expect(again.status).toBe(404);
    expect(again.html).toContain('role="alert"');
  });

  test("a cursor that is not an id: the API's 400 as a page", async () => {
    const page = await get(admin, "/admin/users?cursor=not%2Fan%2Fid");
    expect(page.status).toBe(400);
  });
});

describe("teams", () => {
  test("every team with its slug, type and members, linked to its page", async () => {
    const owner = await person();
    const created = await server.asSession(owner.sid, "POST", "/api/v1/teams", {
      body: { name: "Night <shift>" },
    });
    expect(created.status, created.text).toBe(200);
    const page = await get(admin, "/admin/teams");
    expect(page.html).toContain(`<a href="/teams/${created.body.id}">Night &lt;shift&gt;</a>`);
    expect(page.html).toContain(`<code>${created.body.slug}</code>`);
    expect(page.html).toContain(created.body.type.name);
  });
});

describe("the catalogue", () => {
  const KINDS: { path: string; form: Record<string, string>; api: string; key: string }[] = [
    {
      path: "/admin/team-types",
      form: { name: "Big teams", description: "For big teams", active: "on", order: "5" },
      api: "/api/v1/team-types",
      key: "types",
    },
    {
      path: "/admin/instance-types",
      form: { name: "Large", active: "on", order: "2", properties: '{"cpu": 2}', defaultStack: "" },
      api: "/api/v1/project-types",
      key: "types",
    },
    {
      path: "/admin/stacks",
      form: {
        name: "nr-4-1",
        label: "Node-RED 4.1",
        active: "on",
        properties: '{"nodered": "4.1.15"}',
        projectType: "",
      },
      api: "/api/v1/stacks",
      key: "stacks",
    },
    {
      path: "/admin/templates",
      form: { name: "Default plus", active: "on", settings: '{"env": []}', policy: "{}" },
      api: "/api/v1/templates",
      key: "templates",
    },
  ];

  for (const kind of KINDS) {
    test(`${kind.path}: create, change, delete; bad input is the API's error on the page`, async () => {
      const list = await get(admin, kind.path);
      expect(formActions(list)).toContain(kind.path);

      const created = await post(admin, kind.path, kind.form);
      expect(created.status, created.html).toBe(303);
      const match = new RegExp(`^${kind.path}/(\\w+)\\?done=created$`).exec(created.location!);
      expect(match, created.location!).not.toBeNull();
      const id = match![1]!;
      const entryPage = await get(admin, created.location!);
      expect(entryPage.status).toBe(200);
      expect(entryPage.html).toContain("is created.");
      expect(entryPage.html).toContain(`value="${kind.form.name}"`);

      // A taken name, and JSON that does not parse: the API's refusals, the form kept.
      const taken = await post(admin, kind.path, kind.form);
      expect(taken.status).toBe(409);
      expect(taken.html).toContain('role="alert"');
      const jsonField = Object.keys(kind.form).find((name) => kind.form[name]!.startsWith("{"));
      if (jsonField) {
        const broken = await post(admin, kind.path, {
          ...kind.form,
          name: "other",
          [jsonField]: "{oops",
        });
        expect(broken.status, broken.html).toBe(400);
        expect(broken.html).toContain("{oops");
        expect(broken.html).toContain('aria-invalid="true"');
      }

      // Changed: renamed and made inactive (the checkbox left out).
      const { active: _, ...inactive } = kind.form;
      const saved = await post(admin, `${kind.path}/${id}`, {
        ...inactive,
        name: `${kind.form.name}-2`,
      });
      expect(saved.status, saved.html).toBe(303);
      expect(saved.location).toBe(`${kind.path}/${id}?done=saved`);
      const all = await server.request(
        "GET",
        `${kind.api}${kind.key === "templates" ? "" : "?filter=all"}`,
      );
      const entry = all.body[kind.key].find((item: { id: string }) => item.id === id);
      expect(entry).toMatchObject({ name: `${kind.form.name}-2`, active: false });
      const blank = await post(admin, `${kind.path}/${id}`, { ...kind.form, name: " " });
      expect(blank.status).toBe(400);
      expect(blank.html).toContain('id="edit-name-error"');

      const ask = await post(admin, `${kind.path}/${id}/delete`);
      expect(ask.status).toBe(200);
      expect(ask.html).toContain('name="confirmed" value="yes"');
      const deleted = await post(admin, `${kind.path}/${id}/delete`, { confirmed: "yes" });
      expect(deleted.location).toBe(`${kind.path}?done=deleted`);
      const missing = await get(admin, `${kind.path}/${id}`);
      expect(missing.status).toBe(404);
      expect(missing.html).toContain("<h1>Not found</h1>");
    });
  }

  test("an instance type in use by a stack is not deleted: the API says why", async () => {
    const type = await post(admin, "/admin/instance-types", { name: "Used", active: "on" });
    const typeId = /instance-types\/(\w+)\?/.exec(type.location!)![1]!;
    const stack = await post(admin, "/admin/stacks", {
      name: "used-stack",
      active: "on",
      projectType: typeId,
      properties: '{"nodered": "4.1.15"}',
    });
    expect(stack.status, stack.html).toBe(303);
    const refused = await post(admin, `/admin/instance-types/${typeId}/delete`, {
      confirmed: "yes",
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('role="alert"');
  });
});

describe("settings and audit log", () => {
  test("the settings form changes team:create through the API", async () => {
    const page = await get(admin, "/admin/settings");
    expect(page.html).toMatch(/name="teamCreate" type="checkbox"[^>]* checked/);
    const off = await post(admin, "/admin/settings", {});
    expect(off.location).toBe("/admin/settings?done=saved");
    const someone = await person();
    const settings = await server.asSession(someone.sid, "GET", "/api/v1/settings");
    expect(settings.body["team:create"]).toBe(false);
    const unchecked = await get(admin, "/admin/settings?done=saved");
    expect(unchecked.html).toContain("The settings are saved.");
    expect(unchecked.html).not.toMatch(/name="teamCreate" type="checkbox"[^>]* checked/);
    const on = await post(admin, "/admin/settings", { teamCreate: "on" });
    expect(on.status).toBe(303);
    expect((await server.request("GET", "/api/v1/settings")).body["team:create"]).toBe(true);
  });

  test("the platform's log, newest first, filtered by event and paged", async () => {
    const all = await get(admin, "/admin/audit-log");
    expect(all.html).toContain("<code>users.created-user</code>");
    const updated = await get(admin, "/admin/audit-log?event=platform.settings.updated");
    expect(updated.status).toBe(200);
    expect(updated.html).toContain("<code>platform.settings.updated</code>");
    expect(updated.html).not.toContain("<code>users.created-user</code>");
    const times = [...all.html.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]!);
    expect(times).toEqual([...times].sort().reverse());
    // More entries than a page: a link to the older ones, which keeps the filter.
    const created = await get(admin, "/admin/audit-log?event=users.created-user");
    const next = /href="(\/admin\/audit-log\?[^"]+)">Older entries/.exec(created.html);
    if (next) {
      expect(next[1]).toContain("event=users.created-user");
      const older = await get(admin, next[1]!.replaceAll("&amp;", "&"));
      expect(older.status).toBe(200);
    }
    const bad = await get(admin, "/admin/audit-log?cursor=no%2Fpe");
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('class="field-error"');
  });
});
