// `flowplane snapshots` as a user runs it, against the real server running a real Node-RED: take a
// snapshot, list and show it, rename it, export it to a file with a secret piped in, import the
// file back, roll back to it, set and clear the devices' target, delete it.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok, scratchDir, type User } from "./cli";
import { createRunningInstance, createTeamWithLine, serveWithAdmin } from "./server";

let admin: User;

serveWithAdmin((served) => ({ admin } = served), { instances: true });
beforeAll(async () => {
  await createTeamWithLine(admin, "Snaps", "snaps");
  await createRunningInstance(admin, "snap-cli", "snaps");
}, 120_000);

describe("flowplane snapshots", { timeout: 120_000 }, () => {
  let id: string;

  it("takes, lists, shows and renames a snapshot", async () => {
    const taken = await ok(admin, "snapshots", "create", "snap-cli", "First", "--team", "snaps");
    id = /^Took snapshot First \(id (\w+)\)\.\n$/.exec(taken)![1]!;
    const list = await ok(admin, "snapshots", "list", "snap-cli");
    expect(list.split("\n")[0]).toMatch(/^ID\s+NAME\s+TAKEN\s+BY\s+DESCRIPTION$/);
    expect(cell(list, 1, "ID")).toBe(id);
    expect(cell(list, 1, "NAME")).toBe("First");
    const shown = await ok(admin, "snapshots", "show", "snap-cli", id);
    expect(shown).toContain("node-red@4.1.15");
    expect(await ok(admin, "snapshots", "rename", "snap-cli", id, "Renamed")).toBe(
      `Renamed snapshot First (id ${id}) to Renamed.\n`,
    );
    const json = JSON.parse(await ok(admin, "snapshots", "show", "snap-cli", id, "--json"));
    expect(json).toMatchObject({ id, name: "Renamed", ownerType: "instance" });
  });

  it("exports to a file readable by its owner alone, and imports it back with the secret", async () => {
    const file = join(await scratchDir(), "export.json");
    const exported = await admin.flowplaneWith(
      "a secret of mine\n",
      ...["snapshots", "export", "snap-cli", id, "--output", file],
    );
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(`Exported snapshot Renamed to ${file}.\n`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ name: "Renamed" });
    const again = await admin.flowplaneWith(
      "a secret of mine\n",
      ...["snapshots", "export", "snap-cli", id, "--output", file],
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("exists");

    const imported = await ok(admin, "snapshots", "import", "snap-cli", file, "--name", "Back");
    expect(imported).toMatch(/^Imported snapshot Back \(id \w+\)\.\n$/);
  });

  it("rolls back, sets and clears the devices' target, and deletes", async () => {
    expect(await ok(admin, "snapshots", "rollback", "snap-cli", id)).toBe(
      `snap-cli rolled back to snapshot Renamed (id ${id}).\n`,
    );
    expect(await ok(admin, "snapshots", "target", "snap-cli")).toBe("No target snapshot\n");
    await ok(admin, "snapshots", "target", "snap-cli", id);
    expect(await ok(admin, "snapshots", "target", "snap-cli")).toBe(`${id}\n`);
    await ok(admin, "snapshots", "target", "snap-cli", "--clear");
    expect(await ok(admin, "snapshots", "target", "snap-cli")).toBe("No target snapshot\n");

    const refused = await admin.flowplane("snapshots", "delete", "snap-cli", id);
    expect(refused.status).toBe(2);
    expect(await ok(admin, "snapshots", "delete", "snap-cli", id, "--yes")).toBe(
      `Deleted snapshot Renamed (id ${id}).\n`,
    );
    const gone = await admin.flowplane("snapshots", "show", "snap-cli", id);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("(not_found)");
  });
});
