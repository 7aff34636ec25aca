import { describe, expect, it } from "vitest";
import { cell, newUser, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
serveWithAdmin((served) => ({ server, admin } = served));

async function createTeam(name: string, ...options: string[]) {
  const created = await admin.flowplane("teams", "create", name, ...options, "--json");
  expect(created).toMatchObject({ status: 0, stderr: "" });
  return JSON.parse(created.stdout) as { id: string; name: string; slug: string };
}

describe("flowplane teams", () => {
  it("create makes a team with the caller as its owner, and says so", async () => {
    const created = await admin.flowplane("teams", "create", "Night Shift", "--slug", "night");

    expect(created).toMatchObject({ status: 0, stderr: "" });
    expect(created.stdout).toMatch(
      /^Created team Night Shift \(slug night, id [A-Za-z0-9_-]+\)\.\n$/,
    );
  });

  it("create --json prints the API's team", async () => {
    const team = await createTeam("Day Shift");

    expect(team).toMatchObject({ name: "Day Shift", slug: "day-shift", memberCount: 1 });
    expect(team.id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("list shows the caller's teams in aligned columns, with their role and no index column", async () => {
    const team = await createTeam("Assembly Line", "--slug", "assembly");
    const list = await admin.flowplane("teams", "list");

    expect(list).toMatchObject({ status: 0, stderr: "" });
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+SLUG\s+ROLE\s+MEMBERS\s+TYPE$/);
    const row = lines.findIndex((line) => line.startsWith(team.id));
    expect(row).toBeGreaterThan(0);
    expect(cell(list.stdout, row, "NAME")).toBe("Assembly Line");
    expect(cell(list.stdout, row, "SLUG")).toBe("assembly");
    expect(cell(list.stdout, row, "ROLE")).toBe("owner");
    expect(cell(list.stdout, row, "MEMBERS")).toBe("1");
    expect(cell(list.stdout, row, "TYPE")).toBe("Starter");
  });

  it("list --json prints the API's list", async () => {
    const team = await createTeam("Packaging");
    const list = JSON.parse((await admin.flowplane("teams", "list", "--json")).stdout);

    expect(list.count).toBe(list.teams.length);
    expect(list.teams).toContainEqual(expect.objectContaining({ id: team.id, role: 50 }));
  });

  it("list --all pages through every team for an administrator's admin-opt-in token", async () => {
    await createTeam("Paging One");
    await createTeam("Paging Two");
    const first = await admin.flowplane("teams", "list", "--all", "--limit", "1");
    const page = JSON.parse(
      (await admin.flowplane("teams", "list", "--all", "--limit", "1", "--json")).stdout,
    );

    expect(first.status).toBe(0);
    expect(first.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+SLUG\s+MEMBERS\s+TYPE\s+CREATED$/);
    expect(first.stdout).toContain(
      `1 of ${page.count} teams; next page: --cursor ${page.meta.next_cursor}`,
    );
    const next = JSON.parse(
      (
        await admin.flowplane(
          ...[
            "teams",
            "list",
            "--all",
            "--limit",
            "1",
            "--cursor",
            page.meta.next_cursor,
            "--json",
          ],
        )
      ).stdout,
    );
    expect(next.teams[0].id).not.toBe(page.teams[0].id);
  });

  it("list --all with a token without admin opt-in is refused, with a hint (exit 1)", async () => {
    const token = JSON.parse(
      (await admin.flowplane("tokens", "create", "no opt-in", "--json")).stdout,
    ).token as string;
    const user = await newUser({ FLOWPLANE_TOKEN: token, FLOWPLANE_URL: server.url });
    const list = await user.flowplane("teams", "list", "--all");

    expect(list.status).toBe(1);
    expect(list.stderr).toMatch(/^error: unauthorized \(unauthorized\)\n {2}.*admin opt-in\n$/);
  });

  it("rename changes the name and, with --slug, the slug", async () => {
    const team = await createTeam("Old Name");
    const renamed = await admin.flowplane(
      ...["teams", "rename", team.id, "New Name", "--slug", "new-name"],
    );
    const shown = JSON.parse(
      (await admin.flowplane("teams", "rename", team.id, "Newer Name", "--json")).stdout,
    );

    expect(renamed).toEqual({
      status: 0,
      stdout: `Renamed team ${team.name} to New Name (slug new-name, id ${team.id}).\n`,
      stderr: "",
    });
    expect(shown).toMatchObject({ id: team.id, name: "Newer Name", slug: "new-name" });
  });

  it("renaming a team that does not exist is not_found, naming what was looked for (exit 1)", async () => {
    const renamed = await admin.flowplane("teams", "rename", "noSuchTeam", "Whatever");

    expect(renamed).toEqual({
      status: 1,
      stdout: "",
      stderr: 'error: no team among your teams has the id, slug or name "noSuchTeam" (not_found)\n',
    });
  });

  it("a slug already taken is the API's invalid_slug (exit 1)", async () => {
    await createTeam("Taken", "--slug", "taken");
    const created = await admin.flowplane("teams", "create", "Also Taken", "--slug", "taken");

    expect(created).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: Slug is already in use (invalid_slug)\n",
    });
  });

  it("a blank name is refused by the API's validation (invalid_request, exit 1)", async () => {
    const created = await admin.flowplane("teams", "create", "   ");

    expect(created.status).toBe(1);
    expect(created.stderr).toMatch(/^error: Invalid request: name: .*\(invalid_request\)\n$/);
  });

  it("a missing argument is a usage error (exit 2)", async () => {
    const renamed = await admin.flowplane("teams", "rename", "onlyAnId");

    expect(renamed.status).toBe(2);
    expect(renamed.stderr).toContain("error: missing required argument 'name'");
  });

  it("--limit without --all is a usage error (exit 2)", async () => {
    const list = await admin.flowplane("teams", "list", "--limit", "5");

    expect(list.status).toBe(2);
    expect(list.stderr).toContain("--limit and --cursor page through --all");
  });

  it("a request the server refuses before tRPC runs still shows the API's error (exit 1)", async () => {
    const created = await admin.flowplane("teams", "create", "x".repeat(2 * 1024 * 1024));

    expect(created).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: The body is too large (payload_too_large)\n",
    });
  });
});
