// `login --username` (the password piped in, as a script gives it) and `logout`, against the real
// server: the sign-in session, the token it creates for the CLI, and that token's revocation.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createUserAs,
  loginAs,
  loginFileOf,
  newUser,
  type Outcome,
  type User,
  userWith,
} from "./cli";
import { deadUrl, serveWithAdmin, startServer, type TestServer } from "./server";

let server: TestServer;
let admin: User;
serveWithAdmin((served) => ({ server, admin } = served));

let counter = 0;
const PASSWORD = "correct horse battery staple";

/** A new user with PASSWORD, created by the administrator through the CLI. */
async function createUser(...options: string[]): Promise<{ id: string; username: string }> {
  const username = `member-${++counter}`;
  const created = await createUserAs(
    admin,
    PASSWORD,
    username,
    `Member ${counter}`,
    ...options,
    "--json",
  );
  expect(created.status).toBe(0);
  return JSON.parse(created.stdout);
}

const loginWithPassword = (user: User, username: string, password = PASSWORD, ...more: string[]) =>
  loginAs(user, server.url, username, password, ...more);

const storedLogin = async (user: User) => JSON.parse(await readFile(loginFileOf(user), "utf8"));

/** Someone using only `token`, through the environment. */
const holderOf = (token: string) => newUser({ FLOWPLANE_TOKEN: token, FLOWPLANE_URL: server.url });

async function sessionsOf(userId: string): Promise<number> {
  const rows = await server.db
    .selectFrom("sessions")
    .select("id")
    .where("user_id", "=", userId)
    .execute();
  return rows.length;
}

function expectNoSecrets(outcomes: Outcome[], secrets: string[]) {
  for (const outcome of outcomes) {
    for (const secret of secrets) {
      expect(outcome.stdout).not.toContain(secret);
      expect(outcome.stderr).not.toContain(secret);
    }
  }
}

describe("flowplane login --username", () => {
  it("signs in with the password from stdin, stores a new token of the CLI's own, and signs the session out", async () => {
    const { id, username } = await createUser();
    const user = await newUser();

    const login = await loginWithPassword(user, username);

    expect(login).toMatchObject({ status: 0, stderr: "" });
    const stored = await storedLogin(user);
    expect(stored).toEqual({
      url: server.url,
      token: expect.stringMatching(/^fpp_/),
      tokenId: expect.any(String),
      expiresAt: null,
    });
    expect(login.stdout).toBe(
      `Logged in to ${server.url} as ${username} (Member ${counter}).\n` +
        `Created token flowplane CLI on ${hostname()} (id ${stored.tokenId}) for this CLI, ` +
        `expires: never; \`flowplane logout\` revokes it.\n` +
        `Stored in ${loginFileOf(user)}.\n`,
    );
    expect((await stat(loginFileOf(user))).mode & 0o777).toBe(0o600);
    // The session only served to create the token.
    expect(await sessionsOf(id)).toBe(0);

    const whoami = await user.flowplane("whoami");
    expect(whoami.status).toBe(0);
    expect(whoami.stdout).toMatch(new RegExp(`^username\\s+${username}$`, "m"));
    const tokens = JSON.parse((await user.flowplane("tokens", "list", "--json")).stdout);
    expect(tokens.tokens).toEqual([
      expect.objectContaining({
        id: stored.tokenId,
        name: `flowplane CLI on ${hostname()}`,
        adminOptIn: false,
      }),
    ]);
    expectNoSecrets([login, whoami], [PASSWORD, stored.token]);
  });

  it("prints the API's user with --json, as login --token does", async () => {
    const { id, username } = await createUser();
    const login = await loginWithPassword(await newUser(), username, PASSWORD, "--json");

    expect(login.status).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ id, username, admin: false });
  });

  it("gives an administrator's CLI token admin opt-in, unless --no-admin-opt-in", async () => {
    const { username } = await createUser("--admin");
    const optedIn = await newUser();
    const ordinary = await newUser();
    await loginWithPassword(optedIn, username);
    await loginWithPassword(ordinary, username, PASSWORD, "--no-admin-opt-in");

    expect((await optedIn.flowplane("users", "list")).status).toBe(0);
    const refused = await ordinary.flowplane("users", "list");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("error: unauthorized (unauthorized)\n");
  });

  it("a wrong password is the API's 401 (exit 1), and nothing is stored", async () => {
    const { username } = await createUser();
    const user = await newUser();

    const login = await loginWithPassword(user, username, "not the password at all");

    expect(login).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: Wrong username or password (unauthorized)\n",
    });
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("an unknown user gets the same answer as a wrong password", async () => {
    const login = await loginWithPassword(await newUser(), "nobody-at-all");

    expect(login.stderr).toBe("error: Wrong username or password (unauthorized)\n");
  });

  it("a suspended user is the API's user_suspended (exit 1)", async () => {
    const { username } = await createUser();
    await admin.flowplane("users", "suspend", username);

    expect(await loginWithPassword(await newUser(), username)).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: This account is suspended (user_suspended)\n",
    });
  });

  it("an expired password is the API's password_expired (exit 1), with where to change it; the session is signed out", async () => {
    // The first administrator's generated password is marked expired.
    const user = await newUser();
    const login = await loginWithPassword(user, "admin", server.adminPassword);

    expect(login.status).toBe(1);
    expect(login.stdout).toBe("");
    expect(login.stderr).toBe(
      "error: Your password has expired: choose a new one first (password_expired)\n" +
        `  choose a new password in a browser (sign in at ${server.url}/sign-in, or ` +
        `${server.url}/settings/profile), then run \`flowplane login --username admin\` again\n`,
    );
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
    const me = JSON.parse((await admin.flowplane("whoami", "--json")).stdout);
    expect(await sessionsOf(me.id)).toBe(0);
    expectNoSecrets([login], [server.adminPassword]);
  });

  it("without a password on stdin, fails before signing in (exit 1)", async () => {
    const user = await newUser();
    const login = await user.flowplane("login", "--username", "someone", "--url", server.url);

    expect(login.status).toBe(1);
    expect(login.stderr).toMatch(/^error: no password on stdin: .*\(password_required\)\n$/);
  });

  it("signs in to a server reached at another address than its BASE_URL (behind a proxy)", async () => {
    const proxied = await startServer({ publicUrl: "https://flowplane.example.com" });
    try {
      const created = await fetch(`${proxied.url}/api/v1/users`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${proxied.adminToken}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ username: "proxied", name: "Proxied", password: PASSWORD }),
      });
      expect(created.status).toBe(200);
      const user = await newUser();

      const login = await user.flowplaneWith(
        `${PASSWORD}\n`,
        ...["login", "--username", "proxied", "--url", proxied.url],
      );

      expect(login).toMatchObject({ status: 0, stderr: "" });
      expect((await user.flowplane("whoami")).stdout).toMatch(/^username\s+proxied$/m);
      const { id } = (await created.json()) as { id: string };
      const sessions = await proxied.db
        .selectFrom("sessions")
        .select("id")
        .where("user_id", "=", id)
        .execute();
      expect(sessions).toHaveLength(0);
    } finally {
      await proxied.close();
    }
  });

  it("--expires-at gives the CLI's token an expiry, stored with the login", async () => {
    const { username } = await createUser();
    const user = await newUser();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();

    const login = await loginWithPassword(user, username, PASSWORD, "--expires-at", expiresAt);

    expect(login.status).toBe(0);
    expect(login.stdout).toContain(
      `expires: ${expiresAt.slice(0, 10)} ${expiresAt.slice(11, 19)} UTC`,
    );
    expect(await storedLogin(user)).toMatchObject({ expiresAt });
    const tokens = JSON.parse((await user.flowplane("tokens", "list", "--json")).stdout);
    expect(tokens.tokens[0].expiresAt).toBe(expiresAt);
  });

  it("needs --username or --token (exit 2), not both", async () => {
    const user = await newUser();
    const neither = await user.flowplane("login", "--url", server.url);
    const both = await user.flowplane("login", "--username", "a", "--token", "b");

    expect(neither.status).toBe(2);
    expect(neither.stderr).toContain("give --username <name>");
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("cannot be used with option '--username <name>'");
  });

  it("logging in with --username again revokes the token the previous one created", async () => {
    const { username } = await createUser();
    const user = await newUser();
    await loginWithPassword(user, username);
    const first = await storedLogin(user);

    const again = await loginWithPassword(user, username);

    expect(again).toMatchObject({ status: 0, stderr: "" });
    expect((await storedLogin(user)).token).not.toBe(first.token);
    expect((await (await holderOf(first.token)).flowplane("whoami")).status).toBe(1);
    expect((await user.flowplane("whoami")).status).toBe(0);
  });
});

describe("flowplane logout", () => {
  it("revokes the token login --username created (the API refuses it from then on) and forgets the login", async () => {
    const { username } = await createUser();
    const user = await newUser();
    const login = await loginWithPassword(user, username);
    const { token, tokenId } = await storedLogin(user);
    const holder = await holderOf(token);
    expect((await holder.flowplane("whoami")).status).toBe(0);

    const logout = await user.flowplane("logout");

    expect(logout).toEqual({
      status: 0,
      stdout:
        `Logged out of ${server.url}: revoked the CLI's token (id ${tokenId}) and forgot the ` +
        `login stored in ${loginFileOf(user)}.\n`,
      stderr: "",
    });
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await holder.flowplane("whoami")).toMatchObject({ status: 1, stdout: "" });
    expect((await user.flowplane("whoami")).stderr).toContain("(not_logged_in)");
    expectNoSecrets([login, logout], [PASSWORD, token]);
  });

  it("only forgets a token given to login --token: it is the user's own, and keeps working", async () => {
    const created = JSON.parse(
      (await admin.flowplane("tokens", "create", "mine", "--json")).stdout,
    ) as { token: string };
    const user = await newUser();
    await user.flowplane("login", "--token", created.token, "--url", server.url);

    const logout = await user.flowplane("logout");

    expect(logout.status).toBe(0);
    expect(logout.stdout).toContain(`Logged out of ${server.url}: forgot the login stored in`);
    expect(logout.stdout).toContain("it was not revoked");
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await (await holderOf(created.token)).flowplane("whoami")).status).toBe(0);
    expectNoSecrets([logout], [created.token]);
  });

  it("without a stored login says so (exit 0)", async () => {
    const user = await newUser();

    expect(await user.flowplane("logout")).toEqual({
      status: 0,
      stdout: `Not logged in: no login is stored in ${loginFileOf(user)}.\n`,
      stderr: "",
    });
  });

  it("when the server cannot be reached, forgets the login all the same but exits 1 naming the token", async () => {
    const user = await newUser();
    const url = await deadUrl();
    await mkdir(join(user.configDir!, "flowplane"), { recursive: true });
    await writeFile(
      loginFileOf(user),
      JSON.stringify({ url, token: "fpp_unreachable0000000000000000000000000", tokenId: "tok1" }),
    );

    const logout = await user.flowplane("logout");

    expect(logout.status).toBe(1);
    expect(logout.stdout).toBe("");
    expect(logout.stderr).toMatch(
      new RegExp(`^error: cannot reach ${url}: .*\\(unreachable\\)\\n`),
    );
    expect(logout.stderr).toContain("its token (id tok1) was not revoked");
    expect(logout.stderr).toContain("`flowplane tokens revoke tok1`");
    expect(logout.stderr).not.toContain("fpp_unreachable");
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("counts a token the server no longer accepts as revoked", async () => {
    const { username } = await createUser();
    const user = await newUser();
    await loginWithPassword(user, username);
    const { tokenId } = await storedLogin(user);
    // Revoked behind the CLI's back, with the token itself.
    expect((await user.flowplane("tokens", "revoke", tokenId)).status).toBe(0);

    const logout = await user.flowplane("logout");

    expect(logout.status).toBe(0);
    expect(logout.stdout).toContain(`revoked the CLI's token (id ${tokenId})`);
  });
});

describe("tokens made after login --username", () => {
  /** A user logged in with their password, as a person is. */
  async function signedIn() {
    const { id, username } = await createUser();
    const user = await newUser();
    expect((await loginWithPassword(user, username)).status).toBe(0);
    return { id, username, user, ...(await storedLogin(user)) };
  }

  it("a token handed to a CI job keeps working after the person logs out", async () => {
    const { id, user } = await signedIn();

    const created = await user.flowplaneWith(`${PASSWORD}\n`, "tokens", "create", "ci");

    expect(created.status).toBe(0);
    const token = /^ {4}(\S+)$/m.exec(created.stdout)![1]!;
    const tokenId = /\(id (\S+)\)/.exec(created.stdout)![1]!;
    expect(created.stdout).toContain(
      "It is yours alone: `flowplane logout` does not revoke it; " +
        `\`flowplane tokens revoke ${tokenId}\` does.\n`,
    );
    expect(created.stderr).toBe("warning: copy the token now: it will not be shown again\n");
    // The sign-in only served to create it.
    expect(await sessionsOf(id)).toBe(0);
    const ci = await holderOf(token);
    expect((await ci.flowplane("whoami")).status).toBe(0);

    expect((await user.flowplane("logout")).status).toBe(0);

    expect((await ci.flowplane("teams", "create", "Still works")).status).toBe(0);
    expectNoSecrets([created], [PASSWORD]);
  });

  it("--no-sign-in makes it with the CLI's token, asks for no password, says logout revokes it, and logout does", async () => {
    const { user, tokenId } = await signedIn();

    const created = await user.flowplane("tokens", "create", "scratch", "--no-sign-in", "--json");

    expect(created.status).toBe(0);
    expect(created.stderr).toBe(
      "warning: copy the token now: it will not be shown again\n" +
        `warning: it was created with the CLI's own token (id ${tokenId}), which ` +
        "`flowplane logout` revokes: revoking that token revokes this one too\n",
    );
    const scratch = await holderOf(JSON.parse(created.stdout).token);
    expect((await scratch.flowplane("whoami")).status).toBe(0);

    await user.flowplane("logout");

    expect((await scratch.flowplane("whoami")).status).toBe(1);
  });

  it("without a password on stdin, nothing is created and the message names --no-sign-in (exit 1)", async () => {
    const { user } = await signedIn();
    const before = JSON.parse((await user.flowplane("tokens", "list", "--json")).stdout).count;

    const created = await user.flowplane("tokens", "create", "ci");

    expect(created.status).toBe(1);
    expect(created.stderr).toMatch(/^error: no password on stdin: .*\(password_required\)\n/);
    expect(created.stderr).toContain("--no-sign-in creates it with the CLI's token instead");
    expect(JSON.parse((await user.flowplane("tokens", "list", "--json")).stdout).count).toBe(
      before,
    );
  });

  it("a wrong password creates nothing (the API's 401, not a refused token)", async () => {
    const { user } = await signedIn();

    const created = await user.flowplaneWith("not it at all\n", "tokens", "create", "ci");

    expect(created).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: Wrong username or password (unauthorized)\n",
    });
  });

  it("takes its scope from the options, teams by slug, and the sign-in adds no limit of its own", async () => {
    const { user } = await signedIn();
    const team = JSON.parse(
      (await user.flowplane("teams", "create", "Scoped", "--slug", `scoped-${counter}`, "--json"))
        .stdout,
    ) as { id: string; slug: string };

    const created = await user.flowplaneWith(
      `${PASSWORD}\n`,
      ...["tokens", "create", "deploy", "--read-only", "--team", team.slug, "--json"],
    );

    expect(created.status).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: "deploy",
      readOnly: true,
      adminOptIn: false,
      expiresAt: null,
      teams: [{ id: team.id }],
    });
  });
});

describe("a token the server refuses", () => {
  it("is named by where it came from, the stored login, never by its value", async () => {
    const { username } = await createUser();
    const user = await newUser();
    await loginWithPassword(user, username);
    const { token, tokenId } = await storedLogin(user);
    await user.flowplane("tokens", "revoke", tokenId);

    const whoami = await user.flowplane("whoami");

    expect(whoami).toEqual({
      status: 1,
      stdout: "",
      stderr:
        `error: ${server.url} refused the token of the stored login (unauthorized)\n` +
        "  it was revoked (`flowplane tokens revoke`, or with the token that created it), " +
        "or its user is suspended or deleted\n" +
        `  run \`flowplane login\` again (the login is stored in ${loginFileOf(user)})\n`,
    });
    expectNoSecrets([whoami], [token]);
  });

  it("is said to have expired when the stored login knows its expiry has passed", async () => {
    const { username } = await createUser();
    const user = await newUser();
    await loginWithPassword(user, username);
    const stored = await storedLogin(user);
    await user.flowplane("tokens", "revoke", stored.tokenId);
    // The login as `--expires-at` stored it, its time since passed (the server deletes an
    // expired token as it does a revoked one).
    const expiresAt = "2026-01-02T03:04:05.000Z";
    await writeFile(loginFileOf(user), JSON.stringify({ ...stored, expiresAt }));

    expect(await user.flowplane("teams", "list")).toEqual({
      status: 1,
      stdout: "",
      stderr:
        "error: the token of the stored login expired on 2026-01-02 03:04:05 UTC (unauthorized)\n" +
        `  run \`flowplane login\` again (the login is stored in ${loginFileOf(user)})\n`,
    });
  });

  it("in FLOWPLANE_TOKEN is named as such, over a stored login", async () => {
    const user = await newUser();
    await user.flowplane("login", "--token", server.adminToken, "--url", server.url);
    const overridden = userWith(user.configDir, {
      FLOWPLANE_TOKEN: "fpp_notatokenatall0000000000000000000",
    });
    const whoami = await overridden.flowplane("whoami");

    expect(whoami.status).toBe(1);
    expect(whoami.stderr).toBe(
      `error: ${server.url} refused the token in FLOWPLANE_TOKEN (unauthorized)\n` +
        "  it was revoked or has expired, or its user is suspended or deleted\n" +
        "  set FLOWPLANE_TOKEN to a token that works, or unset it to use the login stored by " +
        "`flowplane login`\n",
    );
    expectNoSecrets([whoami], ["fpp_notatokenatall"]);
  });
});
