// Tokens made after `login --username` (signed in with the password, so that logout does not
// revoke them), and how a token the server refuses is named, against the real server.
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { expectNoSecrets, PASSWORD, serveAccounts, storedLogin } from "./accounts";
import { loginFileOf, newUser, userWith } from "./cli";
import type { TestServer } from "./server";

let server: TestServer;
const { createUser, loginWithPassword, holderOf, sessionsOf, usersCreated } = serveAccounts(
  (served) => ({ server } = served),
);

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
      (
        await user.flowplane(
          "teams",
          "create",
          "Scoped",
          "--slug",
          `scoped-${usersCreated()}`,
          "--json",
        )
      ).stdout,
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
