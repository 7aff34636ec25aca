// `login --username` (the password piped in, as a script gives it) and `logout`, against the real
// server: the sign-in session, the token it creates for the CLI, and that token's revocation.
import { mkdir, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectNoSecrets, PASSWORD, serveAccounts, storedLogin } from "./accounts";
import { loginFileOf, newUser, type User } from "./cli";
import { deadUrl, startServer, type TestServer } from "./server";

let server: TestServer;
let admin: User;
const { createUser, loginWithPassword, holderOf, sessionsOf, usersCreated } = serveAccounts(
  (served) => ({ server, admin } = served),
);

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
      `Logged in to ${server.url} as ${username} (Member ${usersCreated()}).\n` +
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
