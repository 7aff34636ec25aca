// `flowplane library`: a member shares a flow from a file, lists and shows it, and deletes a folder
// from a script; a viewer reads but cannot save.
import { addMember } from "@flowplane/db";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, newUser, scratchDir, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let dir: string;
let teamId: string;

serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  const created = await admin.flowplane("teams", "create", "Shared", "--slug", "shared", "--json");
  expect(created.status, created.stderr).toBe(0);
  teamId = (JSON.parse(created.stdout) as { id: string }).id;
  dir = await scratchDir();
});

const FLOW = [{ id: "n1", type: "inject", wires: [] }];

describe("flowplane library", () => {
  it("saves a flow from a file, lists it and prints it back as it was", async () => {
    const file = join(dir, "starter.json");
    await writeFile(file, JSON.stringify(FLOW));
    const saved = await admin.flowplane(
      ...["library", "save", "flows", "shared/starter.json", "--file", file, "--team", "shared"],
    );
    expect(saved.status, saved.stderr).toBe(0);
    expect(saved.stdout).toBe("Saved flows shared/starter.json in the team library.\n");

    const listed = await admin.flowplane("library", "list", "--team", "shared");
    expect(listed.status, listed.stderr).toBe(0);
    expect(cell(listed.stdout, 1, "TYPE")).toBe("flows");
    expect(cell(listed.stdout, 1, "PATH")).toBe("shared/starter.json");

    const shown = await admin.flowplane(
      ...["library", "show", "flows", "shared/starter.json", "--team", "shared"],
    );
    expect(JSON.parse(shown.stdout)).toEqual(FLOW);
  });

  it("says what was wrong with a bad --meta before sending anything", async () => {
    const file = join(dir, "f.js");
    await writeFile(file, "return msg;");
    const bad = await admin.flowplane(
      ...["library", "save", "functions", "f", "--file", file, "--meta", "[1]", "--team", "shared"],
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--meta must be a JSON object");
  });

  it("deletes a folder from a script only with --yes", async () => {
    const asked = await admin.flowplane("library", "delete", "flows", "shared", "--team", "shared");
    expect(asked.status).toBe(2);
    const deleted = await admin.flowplane(
      ...["library", "delete", "flows", "shared", "--team", "shared", "--yes"],
    );
    expect(deleted.status, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe("Deleted 1 entry.\n");
    const empty = await admin.flowplane("library", "list", "--team", "shared");
    expect(empty.stdout).toBe("The team library has no such entries.\n");
  });

  it("shows the API's refusal to a viewer who saves; a viewer still lists", async () => {
    const team = { id: teamId };
    const vic = await viewerOf(team.id);
    const file = join(dir, "v.json");
    await writeFile(file, "[]");
    const refused = await vic.flowplane(
      ...["library", "save", "flows", "v.json", "--file", file, "--team", team.id],
    );
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("(unauthorized)");
    const read = await vic.flowplane("library", "list", "--team", team.id);
    expect(read.status, read.stderr).toBe(0);
  });
});

/** A viewer of the team, logged in to the CLI with a token of their own. */
async function viewerOf(teamId: string): Promise<User> {
  const call = async (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const password = "correct horse battery staple";
  const created = await call(
    "/api/v1/users",
    { username: "vic", name: "Vic", password },
    { authorization: `Bearer ${server.adminToken}` },
  );
  const { id } = (await created.json()) as { id: string };
  await addMember(server.db, { teamId, userId: id, role: 10 });
  const login = await call("/account/login", { username: "vic", password }, { origin: server.url });
  const sid = login.headers.getSetCookie()[0]!.split(";")[0]!;
  const token = await call(
    "/api/v1/user/tokens",
    { name: "cli" },
    { cookie: sid, origin: server.url },
  );
  const { token: value } = (await token.json()) as { token: string };
  return newUser({ FLOWPLANE_TOKEN: value, FLOWPLANE_URL: server.url });
}
