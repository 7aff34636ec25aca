import { beforeAll, describe, expect, it } from "vitest";
import { cell, newUser, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let team: { id: string; slug: string };
serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  const created = await admin.flowplane(
    ...["teams", "create", "Audit Crew", "--slug", "audit-crew", "--json"],
  );
  team = JSON.parse(created.stdout);
  await admin.flowplane("teams", "rename", team.id, "Audit Crew Two");
});

describe("flowplane audit-log", () => {
  it("without options shows your own account's log, newest first, in aligned columns", async () => {
    const log = await admin.flowplane("audit-log");

    expect(log).toMatchObject({ status: 0, stderr: "" });
    const lines = log.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+EVENT\s+BY\s+ABOUT\s+ID$/);
    // The first administrator and their token were made by the platform at first start, in one
    // transaction: at the same instant, so in either order.
    const oldest = [lines.length - 2, lines.length - 1];
    expect(oldest.map((row) => cell(log.stdout, row, "EVENT")).sort()).toEqual([
      "user.pat.created",
      "users.created-user",
    ]);
    expect(oldest.map((row) => cell(log.stdout, row, "BY"))).toEqual(["(platform)", "(platform)"]);
    expect(cell(log.stdout, 1, "TIME")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  });

  it("--team takes a slug or an id, and --event narrows to the events given", async () => {
    const bySlug = await admin.flowplane("audit-log", "--team", "audit-crew");
    expect(bySlug).toMatchObject({ status: 0, stderr: "" });
    expect(cell(bySlug.stdout, 1, "EVENT")).toBe("team.settings.updated");
    expect(cell(bySlug.stdout, 2, "EVENT")).toBe("team.created");
    expect(cell(bySlug.stdout, 2, "ABOUT")).toBe(`team ${team.id}`);

    const both = JSON.parse(
      (
        await admin.flowplane(
          ...[
            "audit-log",
            "--team",
            team.id,
            "--event",
            "team.created",
            "--event",
            "team.user.added",
            "--json",
          ],
        )
      ).stdout,
    );
    expect(both.count).toBe(1);
    expect(both.log.map((entry: { event: string }) => entry.event)).toEqual(["team.created"]);
  });

  it("--json prints the API's page; --limit and --cursor page back in time", async () => {
    const first = JSON.parse(
      (await admin.flowplane("audit-log", "--team", team.id, "--limit", "1", "--json")).stdout,
    );
    expect(first.log).toHaveLength(1);
    expect(first.meta.next_cursor).toBe(first.log[0].id);

    const second = JSON.parse(
      (
        await admin.flowplane(
          ...[
            "audit-log",
            "--team",
            team.id,
            "--limit",
            "1",
            "--cursor",
            first.meta.next_cursor,
            "--json",
          ],
        )
      ).stdout,
    );
    expect(second.log[0].event).toBe("team.created");

    const text = await admin.flowplane("audit-log", "--team", team.id, "--limit", "1");
    expect(text.stdout).toContain(`\n1 of 2 entries; older ones: --cursor ${first.log[0].id}\n`);
  });

  it("--admin reads the platform's log", async () => {
    const log = await admin.flowplane(
      ...["audit-log", "--admin", "--event", "users.created-user", "--json"],
    );

    expect(log.status).toBe(0);
    expect(JSON.parse(log.stdout).log.at(-1).trigger.type).toBe("system");
  });

  it("--team and --admin together is a usage error (exit 2)", async () => {
    const both = await admin.flowplane("audit-log", "--team", team.id, "--admin");

    expect(both.status).toBe(2);
    expect(both.stderr).toContain("name different logs");
  });

  it("--app reads an application's log", async () => {
    // A team of its own: the other cases count the first team's entries.
    const own = await admin.flowplane("teams", "create", "App Log Crew", "--json");
    const teamId = (JSON.parse(own.stdout) as { id: string }).id;
    const made = await admin.flowplane("apps", "create", "Logged", "--team", teamId, "--json");
    expect(made.status, made.stderr).toBe(0);
    const { id } = JSON.parse(made.stdout) as { id: string };
    const log = await admin.flowplane("audit-log", "--app", id);

    expect(log).toMatchObject({ status: 0, stderr: "" });
    expect(cell(log.stdout, 1, "EVENT")).toBe("application.created");
    expect(cell(log.stdout, 1, "ABOUT")).toBe(`application ${id}`);
    const instance = await admin.flowplane("audit-log", "--instance", id);
    expect(instance.status).toBe(1);
  });

  it("a log the token may not read is refused with the API's error (exit 1)", async () => {
    const other = await newUser();
    const made = await admin.flowplane("tokens", "create", "plain", "--json");
    const { token } = JSON.parse(made.stdout) as { token: string };
    await other.flowplane("login", "--token", token, "--url", server.url);
    // A token without admin opt-in: the administrator is an ordinary user of the platform log.
    const refused = await other.flowplane("audit-log", "--admin");

    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/\((unauthorized|forbidden)\)/);
  });

  it("--follow prints the newest entries oldest first, then new ones as they come", async () => {
    const following = admin.start(
      "audit-log",
      "--team",
      team.id,
      "--follow",
      "--poll-interval",
      "50",
      "--max-polls",
      "40",
    );
    // The newest page is printed (its newest entry last): the follow polls from now on, so the
    // rename is news to it however slowly the machine got here. It has 40 polls to see it.
    await following.printed("team.settings.updated");
    await admin.flowplane("teams", "rename", team.id, "Audit Crew Three");
    const followed = await following.outcome;

    expect(followed).toMatchObject({ status: 0, stderr: "" });
    const events = followed.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.split("  ")[1]);
    expect(events).toEqual(["team.created", "team.settings.updated", "team.settings.updated"]);
  });

  it("--follow --json prints one entry a line", async () => {
    const followed = await admin.flowplane(
      ...[
        "audit-log",
        "--team",
        team.id,
        "--follow",
        "--json",
        "--max-polls",
        "1",
        "--poll-interval",
        "10",
      ],
    );

    const entries = followed.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string });
    expect(entries[0]!.event).toBe("team.created");
  });
});
