import { describe, expect, it } from "vitest";
import { cell, createUserAs, loginAs, newUser, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
serveWithAdmin((served) => ({ server, admin } = served));

let counter = 0;
/** A username no other test uses. */
const fresh = (base: string) => `${base}-${++counter}`;
const PASSWORD = "correct horse battery staple";

interface ApiUser {
  id: string;
  username: string;
  name: string;
  email: string | null;
  admin: boolean;
  suspended: boolean;
}

async function createUser(username: string, ...options: string[]): Promise<ApiUser> {
  const created = await createUserAs(
    admin,
    PASSWORD,
    username,
    `The ${username}`,
    ...options,
    "--json",
  );
  expect(created).toMatchObject({ status: 0, stderr: "" });
  return JSON.parse(created.stdout) as ApiUser;
}

/** Someone signed in as `username` with the CLI (login --username, the password piped in). */
async function signedIn(username: string): Promise<User> {
  const user = await newUser();
  const login = await loginAs(user, server.url, username, PASSWORD);
  expect(login).toMatchObject({ status: 0, stderr: "" });
  return user;
}

async function listed(): Promise<ApiUser[]> {
  return JSON.parse((await admin.flowplane("users", "list", "--all", "--json")).stdout).users;
}

describe("flowplane users create", () => {
  it("creates a user with the password read from stdin, and says so without the password", async () => {
    const username = fresh("alice");
    const created = await createUserAs(
      admin,
      PASSWORD,
      username,
      "Alice Liddell",
      "--email",
      `${username}@example.com`,
    );

    expect(created).toMatchObject({ status: 0, stderr: "" });
    expect(created.stdout).toMatch(
      new RegExp(`^Created user ${username} \\(Alice Liddell, id [A-Za-z0-9_-]+\\)\\.\\n$`),
    );
    expect(await listed()).toContainEqual(
      expect.objectContaining({ username, email: `${username}@example.com`, admin: false }),
    );
    // The password is the one piped in: the user signs in with it.
    expect((await (await signedIn(username)).flowplane("whoami", "--json")).status).toBe(0);
  });

  it("--admin creates a platform administrator; --json prints the API's user", async () => {
    const user = await createUser(fresh("ops"), "--admin");

    expect(user).toMatchObject({ admin: true, suspended: false, email: null });
    expect(user.id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("passes on the API's refusal of a weak password (exit 1), never echoing it", async () => {
    const username = fresh("weak");
    const created = await createUserAs(admin, "short", username, "Weak");

    expect(created.status).toBe(1);
    expect(created.stdout).toBe("");
    expect(created.stderr).toMatch(/^error: Password is too weak: .*\(invalid_request\)\n$/);
    expect(created.stderr).not.toContain("short");
    expect((await listed()).map((user) => user.username)).not.toContain(username);
  });

  it("without a password on stdin, refuses before sending anything (exit 1)", async () => {
    const username = fresh("nopass");
    const created = await admin.flowplane("users", "create", username, "--name", "No Pass");

    expect(created.status).toBe(1);
    expect(created.stderr).toMatch(/^error: no password on stdin: .*\(password_required\)\n$/);
    expect((await listed()).map((user) => user.username)).not.toContain(username);
  });

  it("a taken username is the API's invalid_username (exit 1)", async () => {
    const username = fresh("taken");
    await createUser(username);
    const again = await createUserAs(admin, PASSWORD, username, "Again");

    expect(again).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: Username is not available (invalid_username)\n",
    });
  });

  it("--name is required (exit 2), and the password is never an option", async () => {
    const missing = await admin.flowplaneWith(`${PASSWORD}\n`, "users", "create", fresh("x"));
    const asOption = await admin.flowplane(
      "users",
      "create",
      fresh("y"),
      "--name",
      "Y",
      "--password",
      PASSWORD,
    );

    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("required option '--name <name>' not specified");
    expect(asOption.status).toBe(2);
    expect(asOption.stderr).toContain("unknown option '--password'");
  });
});

describe("flowplane users list", () => {
  it("prints every user in aligned columns", async () => {
    const user = await createUser(fresh("listed"), "--email", `listed${counter}@example.com`);
    const list = await admin.flowplane("users", "list", "--all");

    expect(list).toMatchObject({ status: 0, stderr: "" });
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^USERNAME\s+NAME\s+EMAIL\s+ADMIN\s+SUSPENDED\s+CREATED\s+ID$/);
    const row = lines.findIndex((line) => line.startsWith(`${user.username} `));
    expect(row).toBeGreaterThan(0);
    expect(cell(list.stdout, row, "NAME")).toBe(user.name);
    expect(cell(list.stdout, row, "EMAIL")).toBe(user.email);
    expect(cell(list.stdout, row, "ADMIN")).toBe("no");
    expect(cell(list.stdout, row, "SUSPENDED")).toBe("no");
    expect(cell(list.stdout, row, "CREATED")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(cell(list.stdout, row, "ID")).toBe(user.id);
    const adminRow = lines.findIndex((line) => line.startsWith("admin "));
    expect(cell(list.stdout, adminRow, "ADMIN")).toBe("yes");
  });

  it("--query keeps the users whose username, name or email contains the text", async () => {
    const user = await createUser(fresh("needle"));
    const found = JSON.parse(
      (await admin.flowplane("users", "list", "--query", user.username, "--json")).stdout,
    );

    expect(found.users.map((u: ApiUser) => u.username)).toEqual([user.username]);
    expect(found.count).toBe(1);
  });

  it("pages with --limit and --cursor, and --all follows every page", async () => {
    await createUser(fresh("page"));
    await createUser(fresh("page"));
    const first = await admin.flowplane("users", "list", "--limit", "1");
    const page = JSON.parse(
      (await admin.flowplane("users", "list", "--limit", "1", "--json")).stdout,
    );
    const next = JSON.parse(
      (
        await admin.flowplane(
          ...["users", "list", "--limit", "1", "--cursor", page.meta.next_cursor, "--json"],
        )
      ).stdout,
    );
    const all = JSON.parse(
      (await admin.flowplane("users", "list", "--all", "--limit", "2", "--json")).stdout,
    );

    expect(first.status).toBe(0);
    expect(first.stdout).toContain(
      `\n1 of ${page.count} users; next page: --cursor ${page.meta.next_cursor}`,
    );
    expect(next.users[0].id).not.toBe(page.users[0].id);
    expect(all.meta).toEqual({});
    expect(all.users).toHaveLength(all.count);
    expect(new Set(all.users.map((u: ApiUser) => u.id)).size).toBe(all.count);
    expect(all.users.slice(0, 2).map((u: ApiUser) => u.id)).toEqual([
      page.users[0].id,
      next.users[0].id,
    ]);
  });
});

describe("flowplane users suspend, unsuspend and delete", () => {
  it("suspend (by username) makes the user's tokens fail; unsuspend makes them work again", async () => {
    const user = await createUser(fresh("bob"));
    const bob = await signedIn(user.username);
    expect((await bob.flowplane("whoami")).status).toBe(0);

    const suspended = await admin.flowplane("users", "suspend", user.username);
    expect(suspended).toEqual({
      status: 0,
      stdout:
        `Suspended ${user.username} (id ${user.id}): they cannot sign in and their tokens fail ` +
        `until \`flowplane users unsuspend ${user.username}\`.\n`,
      stderr: "",
    });
    // The stored login's token, which the CLI knows has not expired.
    expect(await bob.flowplane("whoami")).toEqual({
      status: 1,
      stdout: "",
      stderr: expect.stringMatching(
        /^error: \S+ refused the token of the stored login \(unauthorized\)\n {2}it was revoked .*or its user is suspended or deleted\n/,
      ),
    });
    expect(await listed()).toContainEqual(
      expect.objectContaining({ id: user.id, suspended: true }),
    );

    const unsuspended = await admin.flowplane("users", "unsuspend", user.username, "--json");
    expect(JSON.parse(unsuspended.stdout)).toMatchObject({ id: user.id, suspended: false });
    expect((await bob.flowplane("whoami")).status).toBe(0);
  });

  it("suspend takes the user's id as well", async () => {
    const user = await createUser(fresh("byid"));
    const suspended = await admin.flowplane("users", "suspend", user.id, "--json");

    expect(suspended.status).toBe(0);
    expect(JSON.parse(suspended.stdout)).toMatchObject({ id: user.id, suspended: true });
  });

  it("delete (by username) removes the user; their tokens fail", async () => {
    const user = await createUser(fresh("carol"));
    const carol = await signedIn(user.username);

    const deleted = await admin.flowplane("users", "delete", user.username);

    expect(deleted).toEqual({
      status: 0,
      stdout:
        `Deleted user ${user.username} (id ${user.id}), with their tokens and the teams they ` +
        "owned alone.\n",
      stderr: "",
    });
    expect((await listed()).map((u) => u.id)).not.toContain(user.id);
    expect((await carol.flowplane("whoami")).stderr).toMatch(
      /^error: \S+ refused the token of the stored login \(unauthorized\)\n/,
    );
  });

  it("delete --json prints the API's status", async () => {
    const user = await createUser(fresh("dave"));

    expect(
      JSON.parse((await admin.flowplane("users", "delete", user.id, "--json")).stdout),
    ).toEqual({ status: "okay" });
  });

  it("a user who does not exist is not_found (exit 1), by username or by id", async () => {
    expect(await admin.flowplane("users", "delete", "nobody-here")).toEqual({
      status: 1,
      stdout: "",
      stderr: 'error: no user has the id or name "nobody-here" (not_found)\n',
    });
    expect(await admin.flowplane("users", "suspend", "NoSuchUserId1")).toEqual({
      status: 1,
      stdout: "",
      stderr: 'error: no user has the id or name "NoSuchUserId1" (not_found)\n',
    });
    expect((await admin.flowplane("users", "delete", "not.an.id")).stderr).toBe(
      'error: no user has the id or name "not.an.id" (not_found)\n',
    );
  });

  it("the last administrator cannot be suspended: the API's error (exit 1)", async () => {
    // Other tests made administrators: suspended, they leave `admin` the last active one.
    const others = (await listed()).filter(
      (u) => u.admin && !u.suspended && u.username !== "admin",
    );
    for (const other of others) await admin.flowplane("users", "suspend", other.id);

    const suspended = await admin.flowplane("users", "suspend", "admin");

    expect(suspended).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: The last platform administrator cannot be suspended (invalid_request)\n",
    });
  });
});

describe("flowplane users for someone who is not an administrator", () => {
  it("gets the API's 403 (exit 1) with a hint, for every users command", async () => {
    const user = await createUser(fresh("plain"));
    const plain = await signedIn(user.username);

    for (const args of [
      ["users", "list"],
      ["users", "suspend", "admin"],
      ["users", "delete", "admin"],
    ]) {
      expect(await plain.flowplane(...args), args.join(" ")).toEqual({
        status: 1,
        stdout: "",
        stderr:
          "error: unauthorized (unauthorized)\n" +
          "  users are managed only with an administrator's token with admin opt-in\n",
      });
    }
    const created = await createUserAs(plain, PASSWORD, fresh("sneaky"), "Sneaky");
    expect(created.status).toBe(1);
    expect(created.stderr).toContain("error: unauthorized (unauthorized)\n");
  });

  it("an administrator's token without admin opt-in gets the same 403", async () => {
    const token = JSON.parse(
      (await admin.flowplane("tokens", "create", "no opt-in", "--json")).stdout,
    ).token as string;
    const holder = await newUser({ FLOWPLANE_TOKEN: token, FLOWPLANE_URL: server.url });

    const list = await holder.flowplane("users", "list");

    expect(list.status).toBe(1);
    expect(list.stderr).toMatch(/^error: unauthorized \(unauthorized\)\n {2}.*admin opt-in\n$/);
  });
});
