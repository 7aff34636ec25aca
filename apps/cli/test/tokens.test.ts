import { describe, expect, it } from "vitest";
import { cell, newUser, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
serveWithAdmin((served) => ({ server, admin } = served));

/** Someone using only `token`, through the environment. */
const holderOf = (token: string) => newUser({ FLOWPLANE_TOKEN: token, FLOWPLANE_URL: server.url });

async function createToken(...args: string[]) {
  const created = await admin.flowplane("tokens", "create", ...args, "--json");
  expect(created.status).toBe(0);
  return JSON.parse(created.stdout) as { id: string; token: string; [field: string]: unknown };
}

describe("flowplane tokens", () => {
  it("create prints the new token's value once, with a warning that it will not be shown again and that the token in use revokes it", async () => {
    const created = await admin.flowplane("tokens", "create", "deploy bot");

    expect(created.status).toBe(0);
    const value = created.stdout.match(/^ {4}(\S+)$/m)?.[1];
    expect(value).toBeDefined();
    expect(created.stdout.split(value!)).toHaveLength(2);
    expect(created.stdout).toMatch(/^Created token deploy bot \(id \S+\): read-write, teams: all/);
    expect(created.stderr).toBe(
      "warning: copy the token now: it will not be shown again\n" +
        "warning: it was created with the token of the stored login: revoking that token " +
        "revokes this one too\n",
    );

    const whoami = await (await holderOf(value!)).flowplane("whoami", "--json");
    expect(JSON.parse(whoami.stdout)).toMatchObject({ username: "admin" });
  });

  it("list shows every token in aligned columns, never a token's value", async () => {
    const created = await createToken("listed", "--read-only");
    const list = await admin.flowplane("tokens", "list");

    expect(list).toMatchObject({ status: 0, stderr: "" });
    expect(list.stdout.split("\n")[0]).toMatch(
      /^ID\s+NAME\s+ACCESS\s+TEAMS\s+EXPIRES\s+LAST USED$/,
    );
    const row = list.stdout.split("\n").findIndex((line) => line.startsWith(created.id));
    expect(cell(list.stdout, row, "NAME")).toBe("listed");
    expect(cell(list.stdout, row, "ACCESS")).toBe("read-only");
    expect(cell(list.stdout, row, "TEAMS")).toBe("all");
    expect(cell(list.stdout, row, "EXPIRES")).toBe("never");
    expect(list.stdout).not.toContain(created.token);
    expect(list.stdout).not.toContain(server.adminToken);
  });

  it("list --json prints the API's list, without values", async () => {
    const created = await createToken("json listed");
    const list = await admin.flowplane("tokens", "list", "--json");
    const body = JSON.parse(list.stdout);

    expect(body.count).toBe(body.tokens.length);
    expect(body.tokens).toContainEqual(
      expect.objectContaining({ id: created.id, name: "json listed" }),
    );
    expect(list.stdout).not.toContain(created.token);
  });

  it("create sends --read-only, --expires-at and --team as the token's scope, --admin-opt-in alone", async () => {
    const team = JSON.parse(
      (await admin.flowplane("teams", "create", "Scoped", "--json")).stdout,
    ) as { id: string };
    const expiresAt = new Date(Date.now() + 86_400_000);
    const created = await createToken(
      "scoped",
      "--read-only",
      "--expires-at",
      expiresAt.toISOString(),
      "--team",
      team.id,
    );

    expect(created).toMatchObject({
      readOnly: true,
      adminOptIn: false,
      expiresAt: expiresAt.toISOString(),
      teams: [{ id: team.id, name: "Scoped" }],
    });
    const write = await (await holderOf(created.token)).flowplane("teams", "create", "Refused");
    expect(write.status).toBe(1);
    expect(write.stderr).toBe("error: unauthorized (unauthorized)\n");

    const optedIn = await createToken("administration", "--read-only", "--admin-opt-in");
    expect(optedIn).toMatchObject({ readOnly: true, adminOptIn: true });
  });

  it("create passes on the API's refusal of --admin-opt-in with --team (a team-restricted token never administers)", async () => {
    const team = JSON.parse(
      (await admin.flowplane("teams", "create", "Not Both", "--json")).stdout,
    ) as { id: string };
    const before = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count;
    const both = await admin.flowplane(
      ...["tokens", "create", "both", "--team", team.id, "--admin-opt-in"],
    );
    const after = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count;

    expect(both.status).toBe(1);
    expect(both.stderr).toContain("(invalid_request)");
    expect(after).toBe(before);
  });

  it("create takes --expires-at as epoch milliseconds too", async () => {
    const expiresAt = Date.now() + 3_600_000;
    const created = await createToken("epoch", "--expires-at", String(expiresAt));

    expect(created.expiresAt).toBe(new Date(expiresAt).toISOString());
  });

  it("create refuses an --expires-at that is not a time as a usage error (exit 2), creating nothing", async () => {
    const before = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count;
    const created = await admin.flowplane("tokens", "create", "never", "--expires-at", "soonish");
    const after = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count;

    expect(created.status).toBe(2);
    expect(created.stderr).toContain("Not a time");
    expect(after).toBe(before);
  });

  it("create passes on the API's refusal of a past expiry (invalid_request, exit 1)", async () => {
    const created = await admin.flowplane("tokens", "create", "late", "--expires-at", "2001-01-01");

    expect(created.status).toBe(1);
    expect(created.stderr).toBe("error: expiresAt must be in the future (invalid_request)\n");
  });

  it("revoke makes the token fail from then on (exit 1, unauthorized)", async () => {
    const created = await createToken("short-lived");
    const holder = await holderOf(created.token);
    expect((await holder.flowplane("whoami")).status).toBe(0);

    const revoked = await admin.flowplane("tokens", "revoke", created.id);
    expect(revoked).toEqual({
      status: 0,
      stdout: `Revoked token short-lived (id ${created.id}) and any tokens created with it.\n`,
      stderr: "",
    });

    expect(await holder.flowplane("whoami")).toMatchObject({ status: 1, stdout: "" });
    const list = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout);
    expect(list.tokens.map((token: { id: string }) => token.id)).not.toContain(created.id);
  });

  it("revoke --json prints nothing: the exit status is the answer", async () => {
    const created = await createToken("scripted");

    expect(await admin.flowplane("tokens", "revoke", created.id, "--json")).toEqual({
      status: 0,
      stdout: "",
      stderr: "",
    });
  });

  it("create with FLOWPLANE_TOKEN says that token revokes the new one", async () => {
    const parent = await createToken("parent");
    const holder = await holderOf(parent.token);

    const child = await holder.flowplane("tokens", "create", "child", "--json");

    expect(child.status).toBe(0);
    expect(child.stderr).toContain(
      "warning: it was created with the token in FLOWPLANE_TOKEN: revoking that token revokes " +
        "this one too\n",
    );
    await admin.flowplane("tokens", "revoke", parent.id);
    expect(
      (await (await holderOf(JSON.parse(child.stdout).token)).flowplane("whoami")).status,
    ).toBe(1);
  });

  it("--sign-in with FLOWPLANE_TOKEN and no password on stdin fails before creating anything (exit 1)", async () => {
    const holder = await holderOf(server.adminToken);
    const before = JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count;

    const created = await holder.flowplane("tokens", "create", "mine", "--sign-in");

    expect(created.status).toBe(1);
    expect(created.stderr).toContain("(password_required)");
    expect(JSON.parse((await admin.flowplane("tokens", "list", "--json")).stdout).count).toBe(
      before,
    );
  });

  it("revoking a token that does not exist is not_found, naming what was looked for (exit 1)", async () => {
    expect(await admin.flowplane("tokens", "revoke", "noSuchToken")).toEqual({
      status: 1,
      stdout: "",
      stderr: 'error: no token of yours has the id or name "noSuchToken" (not_found)\n',
    });
  });
});
