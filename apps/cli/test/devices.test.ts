// `flowplane devices` as a user runs it, against the real server: an owner creates a device of an
// application (credentials printed once, or written to a device.yml readable by the owner alone),
// lists, shows and renames it, gives it new credentials, sets and clears its target snapshot (a
// snapshot of a real hosted instance of the application), and deletes it (asked first); snapshots
// of what a device runs (`devices snapshots`).
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok, scratchDir, type User } from "./cli";
import {
  createRunningInstance,
  createTeamWithLine,
  serveWithAdmin,
  type TestServer,
} from "./server";

let server: TestServer;
let admin: User;
let snapshotId: string;

serveWithAdmin((served) => ({ server, admin } = served), { instances: true });
beforeAll(async () => {
  await createTeamWithLine(admin, "Devs", "devs");
  await createRunningInstance(admin, "dev-cli", "devs");
  const taken = await admin.flowplane("snapshots", "create", "dev-cli", "First", "--team", "devs");
  expect(taken.status, taken.stderr).toBe(0);
  snapshotId = /\(id (\w+)\)/.exec(taken.stdout)![1]!;
}, 120_000);

describe("flowplane devices", { timeout: 60_000 }, () => {
  let id: string;

  it("creates a device of an application and prints its credentials once, as device.yml", async () => {
    const out = await ok(
      admin,
      ...["devices", "create", "line-1", "--team", "devs", "--application", "Line"],
      ...["--type", "Raspberry Pi 4"],
    );
    id = /^Created device line-1 \(id (\w+)\)/.exec(out)![1]!;
    expect(out).toContain(`deviceId: "${id}"\n`);
    expect(out).toMatch(/token: "fpd_\S+"\n/);
    expect(out).toMatch(/credentialSecret: "[0-9a-f]{64}"\n/);
    expect(out).toContain(`forgeURL: "${server.url}"\n`);

    const list = await ok(admin, "devices", "list", "--team", "devs");
    expect(list.split("\n")[0]).toMatch(/^ID\s+NAME\s+TYPE\s+STATUS\s+ASSIGNED\s+LAST SEEN$/);
    expect(cell(list, 1, "ID")).toBe(id);
    expect(cell(list, 1, "TYPE")).toBe("Raspberry Pi 4");
    expect(cell(list, 1, "STATUS")).toBe("not-seen");
    expect(cell(list, 1, "ASSIGNED")).toBe("Line");
    const ofApp = await ok(admin, "devices", "list", "--team", "devs", "--application", "Line");
    expect(cell(ofApp, 1, "ID")).toBe(id);
    // The credentials are never shown again.
    expect(await ok(admin, "devices", "show", id)).not.toContain("fpd_");
  });

  it("writes device.yml readable by its owner alone with --output, and refuses to overwrite", async () => {
    const file = join(await scratchDir(), "device.yml");
    const out = await ok(admin, "devices", "create", "line-2", "--team", "devs", "--output", file);
    const created = /\(id (\w+)\)/.exec(out)![1]!;
    expect(out).not.toContain("fpd_");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const yml = await readFile(file, "utf8");
    expect(yml).toContain(`deviceId: "${created}"\n`);
    expect(yml).toMatch(/token: "fpd_\S+"\n/);

    const again = await admin.flowplane(
      ...["devices", "generate-credentials", created, "--output", file],
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("exists");
    // Both an application and an instance: a usage error, nothing sent.
    const both = await admin.flowplane(
      ...["devices", "create", "x", "--team", "devs", "--application", "Line", "--instance", "i"],
    );
    expect(both.status).toBe(2);
    await ok(admin, "devices", "delete", created, "--yes");
  });

  it("shows and renames a device, by id or by its name in the team", async () => {
    expect(await ok(admin, "devices", "rename", "line-1", "line-1b", "--team", "devs")).toBe(
      `Renamed device line-1 (id ${id}) to line-1b.\n`,
    );
    const shown = await ok(admin, "devices", "show", id);
    expect(shown).toMatch(/Name\s+line-1b/);
    expect(shown).toMatch(/Assigned to\s+application Line/);
    const json = JSON.parse(
      await ok(admin, "devices", "show", "line-1b", "--team", "devs", "--json"),
    );
    expect(json).toMatchObject({ id, name: "line-1b", type: "Raspberry Pi 4" });
  });

  it("generates new credentials, shown once", async () => {
    const out = await ok(admin, "devices", "generate-credentials", id);
    expect(out).toMatch(/token: "fpd_\S+"\n/);
    expect(out).toContain(`deviceId: "${id}"\n`);
  });

  it("sets and clears the device's target snapshot, saying when the device deploys it", async () => {
    expect(await ok(admin, "devices", "target", id, snapshotId)).toBe(
      `Set device line-1b's target snapshot to First (id ${snapshotId}); the device deploys it ` +
        "at its next check-in (agents check in every minute by default).\n",
    );
    // The snapshot by its name, as the application's snapshots list it.
    expect(await ok(admin, "devices", "target", "line-1b", "First", "--team", "devs")).toContain(
      `to First (id ${snapshotId})`,
    );
    const json = JSON.parse(await ok(admin, "devices", "show", id, "--json"));
    expect(json.targetSnapshot.id).toBe(snapshotId);
    const bad = await admin.flowplane("devices", "target", id, "nosuchsnap12");
    expect(bad).toEqual({
      status: 1,
      stdout: "",
      stderr:
        'error: no snapshot of application Line has the id or name "nosuchsnap12" (not_found)\n',
    });
    expect(await ok(admin, "devices", "target", id, "--clear")).toBe(
      "Cleared device line-1b's target snapshot; the device learns of it at its next check-in " +
        "(agents check in every minute by default).\n",
    );
    expect(JSON.parse(await ok(admin, "devices", "show", id, "--json")).targetSnapshot).toBeNull();
    expect((await admin.flowplane("devices", "target", id)).status).toBe(2);
  });

  it("deletes a device: refused without a terminal or --yes", async () => {
    const refused = await admin.flowplane("devices", "delete", id);
    expect(refused.status).toBe(2);
    expect(await ok(admin, "devices", "delete", id, "--yes")).toBe(
      `Deleted device line-1b (id ${id}).\n`,
    );
    const gone = await admin.flowplane("devices", "show", id);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("(not_found)");
    expect(await ok(admin, "devices", "list", "--team", "devs")).toBe("No devices.\n");
  });
});

/** A check-in as the agent sends it once it runs `snapshot`: first told the settings, then in step. */
async function runs(device: { id: string; credentials: { token: string } }, snapshot: string) {
  const owner = (device as { instance?: { id: string } }).instance;
  const checkIn = async (settings: string | null) => {
    const response = await fetch(`${server.url}/api/v1/devices/${device.id}/live/state`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${device.credentials.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        state: "running",
        project: owner?.id ?? null,
        application: owner ? null : (device as { application?: { id: string } }).application?.id,
        snapshot,
        settings,
        agentVersion: "4.2.1",
        nodeRedVersion: "4.1.15",
      }),
    });
    return { status: response.status, body: (await response.json()) as { settings: string } };
  };
  const first = await checkIn(null);
  expect(first.status).toBe(409);
  expect((await checkIn(first.body.settings)).status).toBe(200);
}

describe("flowplane devices snapshots", { timeout: 60_000 }, () => {
  it("takes a snapshot of what an application's device runs, lists it, deletes it (asked first)", async () => {
    const device = JSON.parse(
      await ok(
        admin,
        ...["devices", "create", "line-9", "--team", "devs"],
        ...["--application", "Line", "--json"],
      ),
    );
    await ok(admin, "devices", "target", device.id, snapshotId);
    const early = await admin.flowplane(
      ...["devices", "snapshots", "create", "line-9", "Too early", "--team", "devs"],
    );
    expect(early.status).toBe(1);
    expect(early.stderr).toContain("(invalid_state)");

    await runs(device, snapshotId);
    const taken = await ok(
      admin,
      ...["devices", "snapshots", "create", "line-9", "As deployed", "--team", "devs"],
    );
    const id = /^Took snapshot As deployed \(id (\w+)\) of device line-9\.\n$/.exec(taken)![1]!;
    const list = await ok(admin, "devices", "snapshots", "list", device.id);
    expect(list.split("\n")[0]).toMatch(/^ID\s+NAME\s+TAKEN\s+BY\s+DESCRIPTION$/);
    expect(cell(list, 1, "ID")).toBe(id);
    expect(cell(list, 1, "NAME")).toBe("As deployed");
    const json = JSON.parse(await ok(admin, "devices", "snapshots", "list", device.id, "--json"));
    expect(json.snapshots[0]).toMatchObject({ id, ownerType: "device", deviceId: device.id });

    expect((await admin.flowplane("devices", "snapshots", "delete", device.id, id)).status).toBe(2);
    expect(await ok(admin, "devices", "snapshots", "delete", device.id, id, "--yes")).toBe(
      `Deleted snapshot As deployed (id ${id}).\n`,
    );
    expect(await ok(admin, "devices", "snapshots", "list", device.id)).toBe(
      "No snapshots of this device.\n",
    );
    await ok(admin, "devices", "delete", device.id, "--yes");
  });

  it("an instance's device: the snapshot is the instance's", async () => {
    const device = JSON.parse(
      await ok(
        admin,
        ...["devices", "create", "line-10", "--team", "devs"],
        ...["--instance", "dev-cli", "--json"],
      ),
    );
    await ok(admin, "devices", "target", device.id, snapshotId);
    await runs(device, snapshotId);
    const taken = await ok(
      admin,
      ...["devices", "snapshots", "create", device.id, "From the field", "--set-as-target"],
    );
    expect(taken).toMatch(
      new RegExp(
        "^Took snapshot From the field \\(id \\w+\\) of device line-10, for instance dev-cli\\.\n" +
          "Set instance dev-cli's devices' target snapshot to From the field \\(id \\w+\\); each " +
          "of its devices deploys it at its next check-in \\(agents check in every minute by " +
          "default\\)\\.\n$",
      ),
    );
    const listed = await admin.flowplane("devices", "snapshots", "list", device.id);
    expect(listed.status).toBe(1);
    expect(listed.stderr).toContain("(invalid_device)");
    await ok(admin, "devices", "delete", device.id, "--yes");
  });
});

describe("flowplane device-groups", { timeout: 60_000 }, () => {
  let group: string;
  let devices: string[];
  const app = ["--application", "Line", "--team", "devs"];

  beforeAll(async () => {
    devices = [];
    for (const name of ["g-1", "g-2"]) {
      const out = await ok(
        admin,
        ...["devices", "create", name, "--team", "devs", "--application", "Line", "--json"],
      );
      devices.push(JSON.parse(out).id);
    }
  });

  it("creates, lists and shows a group", async () => {
    expect(await ok(admin, "device-groups", "list", ...app)).toBe("No device groups.\n");
    const out = await ok(admin, "device-groups", "create", "Line-A", ...app, "--description", "A");
    group = /^Created device group Line-A \(id (\w+)\)\.\n$/.exec(out)![1]!;
    const list = await ok(admin, "device-groups", "list", ...app);
    expect(cell(list, 1, "ID")).toBe(group);
    expect(cell(list, 1, "DEVICES")).toBe("0");
    expect(await ok(admin, "device-groups", "show", "Line-A", ...app)).toMatch(
      new RegExp(`ID\\s+${group}`),
    );
  });

  it("adds devices by id or name, removes one, and sets and clears the group's target", async () => {
    expect(await ok(admin, "device-groups", "add", group, devices[0]!, "g-2", ...app)).toBe(
      "Added g-1, g-2 to device group Line-A.\n",
    );
    let shown = JSON.parse(await ok(admin, "device-groups", "show", group, ...app, "--json"));
    expect(shown.devices.map((d: { id: string }) => d.id).sort()).toEqual([...devices].sort());

    expect(await ok(admin, "device-groups", "target", group, snapshotId, ...app)).toBe(
      `Set device group Line-A's target snapshot to First (id ${snapshotId}); each of its devices ` +
        "deploys it at its next check-in (agents check in every minute by default).\n",
    );
    // What every member runs.
    const member = JSON.parse(await ok(admin, "devices", "show", devices[0]!, "--json"));
    expect(member.targetSnapshot.id).toBe(snapshotId);
    expect(member.deviceGroup.id).toBe(group);

    await ok(admin, "device-groups", "remove", group, devices[1]!, ...app);
    shown = JSON.parse(await ok(admin, "device-groups", "show", group, ...app, "--json"));
    expect(shown.devices.map((d: { id: string }) => d.id)).toEqual([devices[0]]);
    expect(shown.targetSnapshot.id).toBe(snapshotId);

    await ok(admin, "device-groups", "target", group, "--clear", ...app);
    const cleared = JSON.parse(await ok(admin, "devices", "show", devices[0]!, "--json"));
    expect(cleared.targetSnapshot).toBeNull();
  });

  it("refuses a device of no such id or name (not_found), and deletes the group keeping its devices", async () => {
    const bad = await admin.flowplane("device-groups", "add", group, "nosuchdev123", ...app);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      'error: no device in team Devs has the id or name "nosuchdev123" (not_found)\n',
    );

    expect((await admin.flowplane("device-groups", "delete", group, ...app)).status).toBe(2);
    expect(await ok(admin, "device-groups", "delete", group, ...app, "--yes")).toBe(
      `Deleted device group Line-A (id ${group}).\n`,
    );
    expect(await ok(admin, "device-groups", "list", ...app)).toBe("No device groups.\n");
    const kept = JSON.parse(await ok(admin, "devices", "show", devices[0]!, "--json"));
    expect(kept.deviceGroup).toBeNull();
  });
});

describe("flowplane devices move and delete, several at once", { timeout: 60_000 }, () => {
  it("moves devices by name into an application, a group of the team, out of it, unassigned; deletes several", async () => {
    const ids: string[] = [];
    for (const name of ["bulk-1", "bulk-2"]) {
      const out = await ok(admin, "devices", "create", name, "--team", "devs", "--json");
      ids.push(JSON.parse(out).id);
    }
    const team = ["--team", "devs"];
    expect(
      await ok(admin, "devices", "move", "bulk-1", "bulk-2", ...team, "--application", "Line"),
    ).toBe(
      `Device bulk-1 (id ${ids[0]}): application Line.\n` +
        `Device bulk-2 (id ${ids[1]}): application Line.\n`,
    );
    await ok(admin, "device-groups", "create", "Bulk-G", "--application", "Line", ...team);
    const groups = await ok(admin, "device-groups", "list", ...team);
    expect(groups.split("\n")[0]).toMatch(/^ID\s+NAME\s+APPLICATION\s+DEVICES/);
    expect(cell(groups, 1, "APPLICATION")).toBe("Line");
    expect(await ok(admin, "devices", "move", ...ids, ...team, "--group", "Bulk-G")).toContain(
      "application Line, group Bulk-G.\n",
    );
    const out = JSON.parse(
      await ok(admin, "devices", "move", ids[0]!, ...team, "--ungroup", "--json"),
    );
    expect(out.devices[0].deviceGroup).toBeNull();
    expect(await ok(admin, "devices", "move", ids[0]!, ...team, "--unassign")).toBe(
      `Device bulk-1 (id ${ids[0]}): unassigned.\n`,
    );
    const both = await admin.flowplane(
      "devices",
      "move",
      ids[0]!,
      ...team,
      "--unassign",
      "--ungroup",
    );
    expect(both.status).toBe(2);

    expect((await admin.flowplane("devices", "delete", ...ids)).status).toBe(2);
    expect(await ok(admin, "devices", "delete", "bulk-1", "bulk-2", ...team, "--yes")).toBe(
      "Deleted devices bulk-1, bulk-2.\n",
    );
    const gone = await admin.flowplane("devices", "show", ids[1]!);
    expect(gone.status).toBe(1);
  });
});
