// `flowplane instances editor-token`: a token for one instance's editor and admin API, as a script
// takes it (`Authorization: Bearer $(flowplane instances editor-token line-one)`): the token alone
// on stdout, the editor's URL and expiry on the terminal, the whole reply with --json. The server
// runs no Node-RED: what is checked is the token the platform made, for which instance, how long.
import { beforeAll, describe, expect, it } from "vitest";
import { ok as okAs, terminal, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let pressId: string;

serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  await ok("teams", "create", "plant", "--slug", "plant");
  await ok("apps", "create", "Line", "--team", "plant");
  pressId = JSON.parse(
    await ok("instances", "create", "press", "--app", "Line", "--team", "plant", "--json"),
  ).id;
});

const ok = (...args: string[]) => okAs(admin, ...args);

const TOKEN = /^fpe_[0-9A-Za-z]{36}$/;

/** The editor sessions the platform keeps for the instance: one per token. */
const sessionsOf = (projectId: string) =>
  (server.db as any)
    .selectFrom("sessions")
    .select(["expires_at"])
    .where("project_id", "=", projectId)
    .execute() as Promise<{ expires_at: Date }[]>;

describe("instances editor-token", () => {
  it("prints the token alone, for $(…) in a script; the platform keeps it for that instance, an hour", async () => {
    const before = (await sessionsOf(pressId)).length;
    const printed = await ok("instances", "editor-token", "press");
    expect(printed).toMatch(/^fpe_\S+\n$/);
    expect(printed.trimEnd()).toMatch(TOKEN);
    const sessions = await sessionsOf(pressId);
    expect(sessions).toHaveLength(before + 1);
    const lifetime = sessions.at(-1)!.expires_at.getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(3500_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
  });

  it("--expires-in and --team; --json prints the whole reply (token, editor URL, expiry, rights)", async () => {
    const started = Date.now();
    const reply = JSON.parse(
      await ok(
        "instances",
        "editor-token",
        "press",
        "--team",
        "plant",
        "--expires-in",
        "300",
        "--json",
      ),
    );
    expect(reply).toEqual({
      token: expect.stringMatching(TOKEN),
      url: expect.stringContaining("press"),
      expiresAt: expect.any(String),
      permissions: "*",
    });
    const lifetime = Date.parse(reply.expiresAt) - started;
    expect(lifetime).toBeGreaterThan(290_000);
    expect(lifetime).toBeLessThanOrEqual(301_000);
  });

  it("at a terminal, the editor's URL and the expiry go to stderr, the token alone to stdout", async () => {
    const outcome = await admin.flowplaneWith(terminal(), "instances", "editor-token", "press");
    expect(outcome.status, outcome.stderr).toBe(0);
    expect(outcome.stdout.trimEnd()).toMatch(TOKEN);
    expect(outcome.stderr).toMatch(
      /^Editor: http\S*press\S*\nExpires: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(deploys\)\n$/,
    );
  });

  it("refuses a lifetime the API does not take before sending anything, and an unknown instance", async () => {
    const before = (await sessionsOf(pressId)).length;
    for (const value of ["30", "86401", "ten"]) {
      const outcome = await admin.flowplane(
        ...["instances", "editor-token", "press", "--expires-in", value],
      );
      expect(outcome.status, value).toBe(2);
      expect(outcome.stderr).toContain("60 to 86400");
      expect(outcome.stdout).toBe("");
    }
    expect(await sessionsOf(pressId)).toHaveLength(before);
    const unknown = await admin.flowplane("instances", "editor-token", "lathe", "--team", "plant");
    expect(unknown.status).not.toBe(0);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain('no instance in team plant has the id or name "lathe"');
  });

  it("its help shows deploying with curl", async () => {
    const help = await admin.flowplane("instances", "editor-token", "--help");
    expect(help.stdout).toContain(
      'curl -H "Authorization: Bearer $(flowplane instances editor-token line-one)"',
    );
  });
});
