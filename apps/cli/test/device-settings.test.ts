// `flowplane devices env`, `flowplane device-groups env` and `flowplane devices provisioning` as a
// user runs them, against the real server: variables set (hidden ones asked for, never shown
// again, and kept when another is set: the device gets them), listed and removed; a device's
// one-time code printed with its credentials; provisioning tokens created (the token printed once,
// as the agent's device.yml), listed, changed and revoked, and a revoked one creates nothing.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok, scratchDir, type User } from "./cli";
import { createTeamWithLine, serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let device: { id: string; token: string };

serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  await createTeamWithLine(admin, "Edge", "edge");
  const created = await ok(
    admin,
    ...["devices", "create", "press-1", "--team", "edge", "--application", "Line"],
  );
  device = {
    id: /\(id (\w+)\)/.exec(created)![1]!,
    token: /token: "(fpd_\w+)"/.exec(created)![1]!,
  };
}, 120_000);

/** The variables the device gets, as its agent downloads them (hidden values opened). */
async function deviceGets(): Promise<Record<string, string>> {
  const reply = await fetch(`${server.url}/api/v1/devices/${device.id}/live/settings`, {
    headers: { authorization: `Bearer ${device.token}` },
  });
  expect(reply.status).toBe(200);
  return ((await reply.json()) as { env: Record<string, string> }).env;
}

describe("flowplane devices create", () => {
  it("prints the device's one-time code with its credentials, as the agent's command line", async () => {
    const out = await ok(admin, "devices", "create", "press-2", "--team", "edge");
    expect(out).toMatch(
      new RegExp(
        `^  flowfuse-device-agent --otc [a-z]{3,8}(-[a-z]{3,8}){3} --ff-url ${server.url}$`,
        "m",
      ),
    );
  });
});

describe("flowplane devices env", { timeout: 60_000 }, () => {
  it("sets variables, a hidden one asked for and never shown; the device gets them all", async () => {
    expect(await ok(admin, "devices", "env", "list", device.id)).toBe("No variables.\n");
    expect(await ok(admin, "devices", "env", "set", "press-1", "LINE=a", "--team", "edge")).toBe(
      "Set LINE on press-1; the device restarts Node-RED with them at its next check-in.\n",
    );
    const hidden = await admin.flowplaneWith(
      "s3cret-value\n",
      ...["devices", "env", "set", device.id, "API_KEY", "--hidden"],
    );
    expect(hidden.status, hidden.stderr).toBe(0);
    expect(hidden.stdout).not.toContain("s3cret-value");
    // Another variable set later keeps the hidden one's value.
    await ok(admin, "devices", "env", "set", device.id, "SPEED=3");

    const list = await ok(admin, "devices", "env", "list", device.id);
    expect(list.split("\n")[0]).toMatch(/^NAME\s+VALUE$/);
    expect(list).toMatch(/^LINE\s+a$/m);
    expect(list).toMatch(/^API_KEY\s+\(hidden\)$/m);
    expect(list).not.toContain("s3cret-value");
    const json = JSON.parse(await ok(admin, "devices", "env", "list", device.id, "--json"));
    expect(json).toContainEqual({ name: "API_KEY", value: "", hidden: true });
    expect(await deviceGets()).toMatchObject({ LINE: "a", API_KEY: "s3cret-value", SPEED: "3" });
  });

  it("removes variables; one it does not have is an error, nothing removed", async () => {
    const missing = await admin.flowplane("devices", "env", "unset", device.id, "LINE", "NOPE");
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("has no variable NOPE");
    expect(await ok(admin, "devices", "env", "unset", device.id, "LINE")).toContain(
      "Removed LINE from",
    );
    const env = await deviceGets();
    expect(env).not.toHaveProperty("LINE");
    expect(env).toMatchObject({ API_KEY: "s3cret-value", SPEED: "3" });
    // Not a variable's name: a usage error, nothing sent.
    expect((await admin.flowplane("devices", "env", "set", device.id, "1X=y")).status).toBe(2);
  });
});

describe("flowplane device-groups env", { timeout: 60_000 }, () => {
  it("sets a group's variables; its members get them under their own", async () => {
    const app = ["--application", "Line", "--team", "edge"];
    await ok(admin, "device-groups", "create", "Presses", ...app);
    await ok(admin, "device-groups", "add", "Presses", device.id, ...app);
    expect(await ok(admin, "device-groups", "env", "list", "Presses", ...app)).toBe(
      "No variables.\n",
    );
    await ok(admin, "device-groups", "env", "set", "Presses", "PLANT=north", "SPEED=9", ...app);
    const hidden = await admin.flowplaneWith(
      "group-secret\n",
      ...["device-groups", "env", "set", "Presses", "GROUP_KEY", "--hidden", ...app],
    );
    expect(hidden.status, hidden.stderr).toBe(0);
    const list = await ok(admin, "device-groups", "env", "list", "Presses", ...app);
    expect(list).toMatch(/^PLANT\s+north$/m);
    expect(list).toMatch(/^GROUP_KEY\s+\(hidden\)$/m);
    expect(list).not.toContain("group-secret");
    // The device's own SPEED wins over the group's.
    expect(await deviceGets()).toMatchObject({
      PLANT: "north",
      GROUP_KEY: "group-secret",
      SPEED: "3",
    });
    await ok(admin, "device-groups", "env", "unset", "Presses", "PLANT", ...app);
    expect(await deviceGets()).not.toHaveProperty("PLANT");
    expect(await deviceGets()).toMatchObject({ GROUP_KEY: "group-secret" });
  });
});

describe("flowplane devices provisioning", { timeout: 60_000 }, () => {
  it("creates a token printed once as the agent's device.yml; it creates devices of its application", async () => {
    const out = await ok(
      admin,
      ...["devices", "provisioning", "create", "line a", "--team", "edge", "--application", "Line"],
    );
    const id = /^Created provisioning token line a \(id (\w+)\)/.exec(out)![1]!;
    const token = /^provisioningToken: "(fpv_\w+)"$/m.exec(out)![1]!;
    expect(out).toMatch(/^provisioningTeam: "\w+"$/m);
    expect(out).toContain(`forgeURL: "${server.url}"\n`);

    const list = await ok(admin, "devices", "provisioning", "list", "--team", "edge");
    expect(list.split("\n")[0]).toMatch(/^ID\s+NAME\s+ASSIGNS TO\s+EXPIRES\s+CREATED$/);
    expect(cell(list, 1, "ID")).toBe(id);
    expect(cell(list, 1, "EXPIRES")).toBe("never");
    expect(list).not.toContain(token);

    // What the agent does with it.
    const teamId = /^provisioningTeam: "(\w+)"$/m.exec(out)![1]!;
    const registered = await fetch(`${server.url}/api/v1/devices`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "auto-1", type: "Auto Provisioned", team: teamId }),
    });
    expect(registered.status).toBe(200);
    expect(((await registered.json()) as { ownerType: string }).ownerType).toBe("application");
  });

  it("writes the device.yml readable by its owner alone with --output", async () => {
    const file = join(await scratchDir(), "device.yml");
    const out = await ok(
      admin,
      ...["devices", "provisioning", "create", "line-b", "--team", "edge", "--output", file],
      ...["--expires", "2099-01-31T18:00Z"],
    );
    expect(out).not.toContain("fpv_");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toMatch(/^provisioningToken: "fpv_\w+"$/m);
    const list = await ok(admin, "devices", "provisioning", "list", "--team", "edge");
    expect(list).toMatch(/line-b\s+-\s+2099-01-31/);
  });

  it("changes a token's assignment and expiry, by name; revokes it (asked first), and it creates nothing more", async () => {
    const out = await ok(admin, "devices", "provisioning", "create", "line-c", "--team", "edge");
    const token = /^provisioningToken: "(fpv_\w+)"$/m.exec(out)![1]!;
    const teamId = /^provisioningTeam: "(\w+)"$/m.exec(out)![1]!;
    const updated = await ok(
      admin,
      ...["devices", "provisioning", "update", "line-c", "--team", "edge"],
      ...["--application", "Line", "--expires", "2099-02-01T00:00Z"],
    );
    expect(updated).toMatch(/assigns to application \w+, expires 2099-02-01 00:00:00 UTC\.\n$/);
    expect(
      await ok(
        admin,
        ...["devices", "provisioning", "update", "line-c", "--team", "edge"],
        ...["--unassign", "--no-expiry"],
      ),
    ).toMatch(/assigns to -, never expires\.\n$/);
    // Usage errors: nothing to change, or two assignments.
    expect(
      (await admin.flowplane("devices", "provisioning", "update", "line-c", "--team", "edge"))
        .status,
    ).toBe(2);
    expect(
      (
        await admin.flowplane(
          ...["devices", "provisioning", "update", "line-c", "--team", "edge"],
          ...["--application", "Line", "--unassign"],
        )
      ).status,
    ).toBe(2);

    const refused = await admin.flowplane(
      ...["devices", "provisioning", "delete", "line-c", "--team", "edge"],
    );
    expect(refused.status).toBe(2);
    expect(
      await ok(admin, "devices", "provisioning", "delete", "line-c", "--team", "edge", "--yes"),
    ).toMatch(/^Revoked provisioning token line-c \(id \w+\)\.\n$/);
    const after = await fetch(`${server.url}/api/v1/devices`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "late", team: teamId }),
    });
    expect(after.status).toBe(401);
    const gone = await admin.flowplane(
      ...["devices", "provisioning", "delete", "line-c", "--team", "edge", "--yes"],
    );
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(
      /^error: no provisioning token of team \S+ has the id or name "line-c" \(not_found\)\n$/,
    );
  });
});
