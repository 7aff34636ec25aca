// The sign-in and settings pages over plain HTTP, as a browser without script uses them: forms
// posted URL-encoded, the session cookie, redirects. What the pages do is the API's own doing
// (its permission checks and messages); what they add is checked here: open-redirect safety,
// cross-site refusal, escaping, the token value shown once, the confirmation before a revoke.
import { auditEntries } from "@flowplane/db";
import { sql } from "kysely";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { safeNext } from "../../src/pages/next";
import { INITIAL_PASSWORD_FILE } from "../../src/index";
import { sessionOf, startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  // Many sign-ins from one address: its limit is raised here (the per-username one is tested).
  server = await startServer({ rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } } });
});
afterAll(() => server.close());

/** The origin of the server's BASE_URL, which a page of its own sends with a form. */
const ORIGIN = "http://127.0.0.1:3000";

interface Page {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

/** A browser request without script: no redirects followed, forms URL-encoded, Origin sent. */
async function page(
  method: "GET" | "POST",
  path: string,
  options: { sid?: string; form?: Record<string, string | string[]>; origin?: string | null } = {},
): Promise<Page> {
  const headers: Record<string, string> = { accept: "text/html" };
  if (options.sid) headers.cookie = `sid=${options.sid}`;
  let body: string | undefined;
  if (method === "POST") {
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin !== null) headers.origin = origin;
    headers["content-type"] = "application/x-www-form-urlencoded";
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.form ?? {})) {
      for (const item of [value].flat()) params.append(key, item);
    }
    body = params.toString();
  }
  const response = await fetch(server.url + path, { method, headers, body, redirect: "manual" });
  return {
    status: response.status,
    location: response.headers.get("location"),
    html: await response.text(),
    headers: response.headers,
  };
}

async function signIn(username: string, password: string, next?: string) {
  const reply = await page("POST", "/sign-in", {
    form: { username, password, ...(next === undefined ? {} : { next }) },
  });
  expect(reply.status, reply.html).toBe(303);
  return { sid: sessionOf(reply)!, location: reply.location };
}

/** The value of the first `<input id=...>` in a page. */
function inputValue(html: string, id: string): string | undefined {
  const match = new RegExp(`<input id="${id}"[^>]*? value="([^"]*)"`).exec(html);
  return match?.[1];
}

describe("the pages' headers and assets", () => {
  test("the sign-in page is open, carries a strict policy and is not cached", async () => {
    const reply = await page("GET", "/sign-in");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(reply.headers.get("cache-control")).toBe("no-store");
    // Not helmet's no-referrer: under it a browser posts the pages' forms with `Origin: null`.
    expect(reply.headers.get("referrer-policy")).toBe("same-origin");
    const csp = reply.headers.get("content-security-policy")!;
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain("unsafe");
    expect(reply.html).toContain('<label for="username">');
    expect(reply.html).toContain('<meta name="viewport"');
  });

  test("the assets load without a session, under versioned URLs a browser may keep", async () => {
    const html = (await page("GET", "/sign-in")).html;
    for (const [name, type] of [
      ["pages.css", "text/css; charset=utf-8"],
      ["pages.js", "text/javascript; charset=utf-8"],
      ["icon.svg", "image/svg+xml"],
    ] as const) {
      const url = new RegExp(`/assets/${name.replace(".", "\\.")}\\?v=[\\w-]+`).exec(html)?.[0];
      expect(url, name).toBeDefined();
      const reply = await fetch(server.url + url);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("content-type")).toBe(type);
      expect(reply.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      // Without the current version: revalidate every time.
      const bare = await fetch(`${server.url}/assets/${name}`);
      expect(bare.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate");
    }
    expect((await fetch(`${server.url}/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  test("the API still refuses URL-encoded bodies: only the pages take forms (415)", async () => {
    const reply = await server.request("POST", "/api/v1/user/tokens", {
      body: "name=form",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(reply.status).toBe(415);
    const login = await server.request("POST", "/account/login", {
      token: null,
      body: "username=admin&password=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(login.status).toBe(415);
  });
});

describe("signing in", () => {
  test("settings pages send a browser without a session to sign in, and back after", async () => {
    for (const path of ["/settings/security", "/settings/profile", "/settings/password"]) {
      const reply = await page("GET", `${path}?x=1`);
      expect(reply.status, path).toBe(303);
      expect(reply.location).toBe(`/sign-in?next=${encodeURIComponent(`${path}?x=1`)}`);
    }
    const user = await server.userWithPassword();
    const form = await page("GET", "/sign-in?next=%2Fsettings%2Fprofile%3Fx%3D1");
    expect(form.html).toContain('name="next" value="/settings/profile?x=1"');
    const { sid, location } = await signIn(user.username, user.password, "/settings/profile?x=1");
    expect(location).toBe("/settings/profile?x=1");
    const profile = await page("GET", "/settings/profile", { sid });
    expect(profile.status).toBe(200);
    expect(profile.html).toContain(user.username);
  });

  test("a wrong password shows the API's message and keeps the username, escaped", async () => {
    const reply = await page("POST", "/sign-in", {
      form: { username: '<b>"nobody"</b>', password: "wrong", next: "/api/" },
    });
    expect(reply.status).toBe(401);
    expect(sessionOf(reply)).toBeUndefined();
    expect(reply.html).toContain("Wrong username or password");
    expect(reply.html).toContain('value="&lt;b&gt;&quot;nobody&quot;&lt;/b&gt;"');
    expect(reply.html).not.toContain("<b>");
    expect(reply.html).toContain('name="next" value="/api/"');
  });

  test("after sign-in only a path on this site is gone to, never another origin", async () => {
    const user = await server.userWithPassword();
    for (const next of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "/\t/evil.example",
      "javascript:alert(1)",
      "http:/evil.example",
      "/sign-in?next=/sign-in",
      "/account/logout",
      "/.//evil.example",
    ]) {
      const { location } = await signIn(user.username, user.password, next);
      expect(location, next).toBe("/teams");
    }
    // Dot segments that normalize to "//host" (a browser reads it as another site): what is
    // returned is judged, not what was read. As a link to the sign-in page hands them out, to a
    // signed-in browser (redirected at once) and one that signs in.
    const { sid } = await signIn(user.username, user.password);
    for (const next of [
      "/.//evil.example",
      "/..//evil.example",
      "/a/..//evil.example",
      "/%2e//evil.example",
      "/%2E%2e//evil.example/x",
      "/./\\evil.example",
    ]) {
      const link = `/sign-in?next=${encodeURIComponent(next)}`;
      expect((await page("GET", link, { sid })).location, next).toBe("/teams");
      const form = await page("GET", link);
      expect(form.html, next).not.toContain("evil.example");
    }
    const { location } = await signIn(user.username, user.password, "/api/?a=1#frag");
    expect(location).toBe("/api/?a=1#frag");
  });

  test("safeNext keeps same-site paths and refuses everything else", () => {
    expect(safeNext("/api/")).toBe("/api/");
    expect(safeNext("/settings/profile?tab=1")).toBe("/settings/profile?tab=1");
    expect(safeNext("/a/../b")).toBe("/b");
    // An editor's sign-in continues at the platform's authorization after the sign-in page.
    expect(safeNext("/account/authorize?client_id=x&state=y")).toBe(
      "/account/authorize?client_id=x&state=y",
    );
    expect(safeNext("/account/login")).toBe("/teams");
    expect(safeNext("/account/authorizes")).toBe("/teams");
    for (const bad of [
      undefined,
      42,
      "",
      "api/",
      "//x",
      "/\\x",
      "\\\\x",
      "/x\n",
      "https://x/",
      "/.//x",
      "/%2e//x",
    ]) {
      expect(safeNext(bad), String(bad)).toBe("/teams");
    }
  });

  test("a form posted from another site is refused, and signs nobody in", async () => {
    const user = await server.userWithPassword();
    const reply = await page("POST", "/sign-in", {
      form: { username: user.username, password: user.password },
      origin: "https://evil.example",
    });
    expect(reply.status).toBe(403);
    expect(sessionOf(reply)).toBeUndefined();
    expect(reply.html).toContain("refused");

    // Signed in, a form a browser marks as sent from another site is refused too (as the API's
    // cookie writes are).
    const { sid } = await signIn(user.username, user.password);
    const create = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "forged" },
      origin: "http://127.0.0.1:3001",
    });
    expect(create.status).toBe(403);
    const tokens = await page("GET", "/settings/security", { sid });
    expect(tokens.html).not.toContain("forged");
  });

  test("an expired password leads to the new-password page first, then to next", async () => {
    const user = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { password_expired: true } });
    const { sid, location } = await signIn(user.username, user.password, "/api/");
    expect(location).toBe("/settings/password?next=%2Fapi%2F");
    // Every other page leads there until it is changed.
    const profile = await page("GET", "/settings/profile", { sid });
    expect(profile.location).toBe("/settings/password?next=%2Fsettings%2Fprofile");

    const form = await page("GET", "/settings/password?next=%2Fapi%2F", { sid });
    expect(form.status).toBe(200);
    expect(form.html).toContain("Your password has expired");
    const weak = await page("POST", "/settings/password", {
      sid,
      form: {
        old_password: user.password,
        password: "short",
        password_repeat: "short",
        next: "/api/",
      },
    });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain("Password is too weak");
    const mismatch = await page("POST", "/settings/password", {
      sid,
      form: {
        old_password: user.password,
        password: "a new long phrase",
        password_repeat: "other",
      },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.html).toContain("The new passwords do not match.");

    const done = await page("POST", "/settings/password", {
      sid,
      form: {
        old_password: user.password,
        password: "a new long phrase",
        password_repeat: "a new long phrase",
        next: "/api/",
      },
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/api/");
    expect((await page("GET", "/settings/security", { sid })).status).toBe(200);
  });
});

describe("the forced new password after signing in", () => {
  test("is not asked for again right after signing in; an older session, or a token, must give it", async () => {
    const user = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { password_expired: true } });
    const { sid } = await signIn(user.username, user.password);
    const form = await page("GET", "/settings/password", { sid });
    expect(form.html).not.toContain('name="old_password"');
    // The new one must still differ from the one just given.
    const same = await page("POST", "/settings/password", {
      sid,
      form: { password: user.password, password_repeat: user.password },
    });
    expect(same.status).toBe(400);
    expect(same.html).toContain("The new password must differ from the old one");
    const done = await page("POST", "/settings/password", {
      sid,
      form: { password: "a phrase of my own", password_repeat: "a phrase of my own" },
    });
    expect(done.status).toBe(303);
    await signIn(user.username, "a phrase of my own");

    // A session that signed in longer ago is asked, by the page and by the API.
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { password_expired: true } });
    const older = await signIn(user.username, "a phrase of my own");
    await sql`update sessions set created_at = now() - interval '11 minutes' where user_id = ${user.id}`.execute(
      server.db,
    );
    const asked = await page("GET", "/settings/password", { sid: older.sid });
    expect(asked.html).toContain('name="old_password"');
    const refused = await page("POST", "/settings/password", {
      sid: older.sid,
      form: { password: "yet another phrase", password_repeat: "yet another phrase" },
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("Give your current password");
    expect(refused.html).toContain('name="old_password"');
    // A token always gives it.
    const token = await server.user();
    const api = await server.request("PUT", "/api/v1/user/change_password", {
      token: token.token,
      body: { password: "a token's new phrase" },
    });
    expect(api.status).toBe(400);
    expect(api.body.errors).toEqual([{ path: "old_password", message: "Required" }]);
  });

  test("the first password: the sign-in page points at its file until it is changed, then the file is gone", async () => {
    const file = join(server.dataDir, INITIAL_PASSWORD_FILE);
    const first = (await readFile(file, "utf8")).trim();
    expect((await page("GET", "/sign-in")).html).toContain("First start?");
    const { sid, location } = await signIn("admin", first);
    expect(location).toBe("/settings/password");
    const form = await page("GET", location!, { sid });
    expect(form.html).not.toContain('name="old_password"');
    const done = await page("POST", "/settings/password", {
      sid,
      form: { password: "a keeper of the keys", password_repeat: "a keeper of the keys" },
    });
    expect(done.status).toBe(303);
    await expect(access(file)).rejects.toThrow();
    expect((await page("GET", "/sign-in")).html).not.toContain("First start?");
    await signIn("admin", "a keeper of the keys");
  });
});

describe("signing out", () => {
  test("a form post signs out without script: 303 to the sign-in page, the session ended", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const foreign = await page("POST", "/sign-out", { sid, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await page("GET", "/settings/security", { sid })).status).toBe(200);

    const out = await page("POST", "/sign-out", { sid });
    expect(out.status).toBe(303);
    expect(out.location).toBe("/sign-in");
    expect(out.headers.getSetCookie().join("\n")).toMatch(/^sid=;/m);
    const after = await page("GET", "/settings/security", { sid });
    expect(after.location).toBe("/sign-in?next=%2Fsettings%2Fsecurity");
    const [entry] = (await auditEntries(server.db, { event: "account.logout" })).filter(
      (e) => e.actor_id === user.id,
    );
    expect(entry).toBeDefined();
    // Signed out already: still back to the sign-in page.
    expect((await page("POST", "/sign-out")).location).toBe("/sign-in");
  });
});

describe("rate limits, as the API counts them", () => {
  test("failed sign-ins per username: the page says so, with Retry-After (429); the right password still signs in", async () => {
    const user = await server.userWithPassword();
    for (let i = 0; i < 5; i++) {
      const reply = await page("POST", "/sign-in", {
        form: { username: user.username, password: "wrong" },
      });
      expect(reply.status).toBe(401);
    }
    const limited = await page("POST", "/sign-in", {
      form: { username: user.username, password: "wrong again" },
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.html).toContain("Too many failed sign-ins for this account");
    expect(sessionOf(limited)).toBeUndefined();
    await signIn(user.username, user.password);
  });

  test("password changes per user count the page's calls too (429)", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const attempt = () =>
      page("POST", "/settings/profile/password", {
        sid,
        form: {
          old_password: "wrong",
          password: "a fine new phrase",
          password_repeat: "a fine new phrase",
        },
      });
    for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(400);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.html).toMatch(/Too many [a-z ]*password changes/);
  });
});

describe("the Security page", () => {
  test("creates a token whose value is shown once, never logged, and which works", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const team = await server.request("POST", "/api/v1/teams", {
      token: null,
      headers: { cookie: `sid=${sid}`, origin: ORIGIN },
      body: { name: "Page Team" },
    });
    expect(team.status).toBe(200);
    const expiry = new Date(Date.now() + 3 * 86400_000).toISOString().slice(0, 10);

    const created = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "<i>ci</i>", expiresAt: expiry, readOnly: "on", teamIds: team.body.id },
    });
    expect(created.status).toBe(200);
    const value = inputValue(created.html, "new-token")!;
    expect(value).toMatch(/^fpp_\w{36}$/);
    expect(created.html).toContain("&lt;i&gt;ci&lt;/i&gt;");
    expect(created.html).not.toContain("<i>ci</i>");

    const me = await server.request("GET", "/api/v1/user/tokens", { token: value });
    expect(me.status).toBe(200);
    const token = me.body.tokens.find((t: { name: string }) => t.name === "<i>ci</i>");
    expect(token).toMatchObject({
      readOnly: true,
      expiresAt: `${expiry}T23:59:59.000Z`,
      teams: [{ id: team.body.id, name: "Page Team" }],
    });

    const again = await page("GET", "/settings/security", { sid });
    expect(again.html).toContain("&lt;i&gt;ci&lt;/i&gt;");
    expect(again.html).not.toContain(value);
    expect(server.logs.join("\n")).not.toContain(value);
    const audit = await auditEntries(server.db, { event: "user.pat.created" });
    expect(JSON.stringify(audit)).toContain("<i>ci</i>");
    expect(JSON.stringify(audit)).not.toContain(value);
  });

  test("the API's own checks decide, and its messages are shown", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const page1 = await page("GET", "/settings/security", { sid });
    // Admin opt-in is offered to administrators only …
    expect(page1.html).not.toContain('name="adminOptIn"');
    // … and refused by the API to anyone else, whatever the form says.
    const admin = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "sneaky", adminOptIn: "on" },
    });
    expect(admin.status).toBe(403);
    expect(admin.html).toContain("Only administrators can create admin opt-in tokens");
    expect(inputValue(admin.html, "token-name")).toBe("sneaky");

    const foreign = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "foreign", teamIds: "AAAAAAAAAAAA" },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain("Not a member of team AAAAAAAAAAAA");

    const blank = await page("POST", "/settings/security/tokens", { sid, form: { name: " " } });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('aria-invalid="true"');

    const past = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "old", expiresAt: "2020-01-01" },
    });
    expect(past.status).toBe(400);
    expect(past.html).toContain("expiresAt must be in the future");

    const adminUser = await server.userWithPassword({ admin: true });
    const asAdmin = await signIn(adminUser.username, adminUser.password);
    const adminPage = await page("GET", "/settings/security", { sid: asAdmin.sid });
    expect(adminPage.html).toContain('name="adminOptIn"');
  });

  test("a revoke without the confirmation asks first; confirmed, the token stops working", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const created = await page("POST", "/settings/security/tokens", {
      sid,
      form: { name: "doomed" },
    });
    const value = inputValue(created.html, "new-token")!;
    const list = await server.request("GET", "/api/v1/user/tokens", { token: value });
    const id = list.body.tokens[0].id as string;

    const ask = await page("POST", `/settings/security/tokens/${id}/revoke`, {
      sid,
      form: { confirmed: "" },
    });
    expect(ask.status).toBe(200);
    expect(ask.html).toContain("Revoke the token “<strong>doomed</strong>”?");
    expect((await server.request("GET", "/api/v1/user", { token: value })).status).toBe(200);

    const done = await page("POST", `/settings/security/tokens/${id}/revoke`, {
      sid,
      form: { confirmed: "yes" },
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/settings/security?done=revoked");
    expect((await server.request("GET", "/api/v1/user", { token: value })).status).toBe(401);
    const after = await page("GET", done.location!, { sid });
    expect(after.html).toContain("The token is revoked.");
    expect(after.html).not.toContain("doomed");

    // Another user's token: the API's 404, on a page.
    const other = await server.userWithPassword();
    const otherSession = await signIn(other.username, other.password);
    const foreign = await page("POST", `/settings/security/tokens/${id}/revoke`, {
      sid: otherSession.sid,
      form: { confirmed: "yes" },
    });
    expect(foreign.status).toBe(404);
  });
});

describe("the Profile page", () => {
  test("changes name and email, and shows the API's refusals", async () => {
    const user = await server.userWithPassword();
    const taken = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${taken.id}`, {
      body: { email: "taken@example.com" },
    });
    const { sid } = await signIn(user.username, user.password);
    const saved = await page("POST", "/settings/profile", {
      sid,
      form: { name: "Ada Lovelace", email: "ada@example.com" },
    });
    expect(saved.location).toBe("/settings/profile?done=profile");
    const me = await server.request("GET", `/api/v1/users/${user.id}`);
    expect(me.body).toMatchObject({ name: "Ada Lovelace", email: "ada@example.com" });
    expect((await page("GET", saved.location!, { sid })).html).toContain("Your profile is saved.");

    const refused = await page("POST", "/settings/profile", {
      sid,
      form: { name: "Ada", email: "taken@example.com" },
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("Email is already in use");
    expect(inputValue(refused.html, "email")).toBe("taken@example.com");

    // An emptied email removes it.
    await page("POST", "/settings/profile", { sid, form: { name: "Ada", email: "" } });
    expect((await server.request("GET", `/api/v1/users/${user.id}`)).body.email).toBeNull();
  });

  test("changes the password, with the API's message for a wrong or weak one", async () => {
    const user = await server.userWithPassword();
    const { sid } = await signIn(user.username, user.password);
    const wrong = await page("POST", "/settings/profile/password", {
      sid,
      form: {
        old_password: "nope",
        password: "a fine new phrase",
        password_repeat: "a fine new phrase",
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain("The current password is wrong");
    const weak = await page("POST", "/settings/profile/password", {
      sid,
      form: {
        old_password: user.password,
        password: user.username,
        password_repeat: user.username,
      },
    });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain("Password is too weak");

    const done = await page("POST", "/settings/profile/password", {
      sid,
      form: {
        old_password: user.password,
        password: "a fine new phrase",
        password_repeat: "a fine new phrase",
      },
    });
    expect(done.location).toBe("/settings/profile?done=password");
    await signIn(user.username, "a fine new phrase");
  });
});
