// `flowplane rollouts` as an owner runs it, against the real server and devices that speak the
// agent's HTTP protocol (rollout-devices.ts): the plan's waves, as the API plans them; a rollout
// created and watched (piped: its changes line by line) until it succeeded, exit 0; one aborted
// while its first device soaks, the watch ending non-zero with that device rolled back; waves the
// target cannot meet refused with the API's error, nothing created.
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok, type User } from "./cli";
import { fleet, type Fleet } from "./rollout-devices";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let devices: Fleet;

serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  const team = JSON.parse(await ok(admin, "teams", "create", "Rollouts", "--slug", "ro", "--json"));
  const app = JSON.parse(await ok(admin, "apps", "create", "Line", "--team", "ro", "--json"));
  devices = await fleet(server, team.id, app.id, {
    group: "line-a",
    count: 4,
    snapshots: ["Release-1", "Release-2", "Release-3"],
  });
}, 60_000);

const target = ["--application", "Line", "--team", "ro", "--group", "line-a"];

describe("flowplane rollouts", { timeout: 60_000 }, () => {
  it("plans waves as the API does: each wave's devices, what they run now and will run", async () => {
    const args = ["rollouts", "plan", "Release-2", ...target, "--waves", "1,50%,100%"];
    const plan = JSON.parse(await ok(admin, ...args, "--json"));
    expect(plan.dryRun).toBe(true);
    const sizes = plan.waves.map((w: { devices: unknown[] }) => w.devices.length);
    expect(sizes).toEqual([1, 2, 1]);

    const printed = await ok(admin, ...args);
    expect(printed).toContain("Snapshot        Release-2");
    expect(printed).toContain("Target          device group line-a");
    const rows = printed.slice(printed.indexOf("WAVE"));
    plan.waves
      .flatMap((w: { devices: { name: string }[] }, i: number) =>
        w.devices.map((d) => [String(i + 1), d.name]),
      )
      .forEach(([wave, name]: string[], at: number) => {
        expect(cell(rows, at + 1, "WAVE")).toBe(wave);
        expect(cell(rows, at + 1, "DEVICE")).toBe(name);
        expect(cell(rows, at + 1, "RUNS NOW")).toBe("Release-1");
        expect(cell(rows, at + 1, "WILL RUN")).toBe("Release-2");
      });
    // A plan changes nothing.
    expect(await ok(admin, "rollouts", "list", "--application", "Line", "--team", "ro")).toBe(
      "No rollouts.\n",
    );
  });

  it("refuses waves the target cannot meet with the API's error, creating nothing", async () => {
    const refused = await admin.flowplane(
      ...["rollouts", "create", "Release-2", ...target, "--waves", "5,100%"],
    );
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^error: .+ \(invalid_waves\)\n/);
    const list = JSON.parse(await ok(admin, "rollouts", "list", ...target, "--json"));
    expect(list.count).toBe(0);
    // A wave the CLI cannot read is a usage error, nothing sent.
    const bad = await admin.flowplane(
      ...["rollouts", "create", "Release-2", ...target, "--waves", "1,half"],
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('"half" is not a wave');
  });

  it("creates a rollout and watches it until it succeeded (exit 0)", async () => {
    const stop = devices.follow();
    try {
      const watched = await admin.flowplane(
        ...["rollouts", "create", "Release-2", ...target, "--waves", "1,100%", "--soak", "0"],
        ...["--watch", "--interval", "100"],
      );
      expect(watched.stderr).toBe("");
      expect(watched.status).toBe(0);
      const id = /^Created rollout (\w+) \(running\)\.\n/.exec(watched.stdout)![1]!;
      // Piped: each change once, line by line.
      expect(watched.stdout).toContain("rollout  running\n");
      expect(watched.stdout).toMatch(/^wave 1 {2}line-a-\d {2}healthy$/m);
      expect(watched.stdout).toContain("wave 2  done\n");
      expect(watched.stdout.match(/^rollout {2}running$/gm)).toHaveLength(1);
      expect(watched.stdout).toMatch(
        new RegExp(`Rollout ${id} succeeded \\(wave 2 of 2, 0 failed\\)\\n$`),
      );
      const shown = await ok(admin, "rollouts", "show", id);
      expect(shown).toMatch(/^State +succeeded$/m);
      for (let row = 1; row <= 4; row++) {
        expect(cell(shown.slice(shown.indexOf("WAVE ")), row, "DEVICE STATE")).toBe("healthy");
      }
      const listed = await ok(admin, "rollouts", "list", ...target);
      expect(cell(listed, 1, "ID")).toBe(id);
      expect(cell(listed, 1, "STATE")).toBe("succeeded");
    } finally {
      await stop();
    }
    for (const device of devices.devices) expect(device.runs).toBe(devices.snapshots[1]);
  });

  it("aborts a rollout: the watch ends non-zero, the device it deployed rolled back", async () => {
    const stop = devices.follow();
    try {
      const created = await ok(
        admin,
        ...["rollouts", "create", "Release-3", ...target, "--waves", "1,100%", "--soak", "3600"],
      );
      const id = /^Created rollout (\w+) \(running\)\.\n$/.exec(created)![1]!;
      const watch = admin.start("rollouts", "watch", id, "--interval", "100");
      const atTerminal = admin.startAtTerminal("rollouts", "watch", id, "--interval", "100");
      await watch.printed("soaking");
      await atTerminal.printed("soaking");
      expect(await ok(admin, "rollouts", "abort", id)).toMatch(
        new RegExp(`^Rollout ${id} aborted .*: Aborted by an owner\\n$`),
      );
      const ended = await watch.outcome;
      expect(ended.status).toBe(1);
      expect(ended.stderr).toMatch(/^error: the rollout aborted: .+ \(rollout_aborted\)\n$/);
      expect(ended.stdout).toMatch(/^wave 1 {2}line-a-\d {2}rolled back/m);
      // At a terminal: the table drawn again in place (up over the last one, cleared below).
      const drawn = await atTerminal.outcome;
      expect(drawn.status).toBe(1);
      const esc = String.fromCharCode(27);
      const screens = drawn.stdout.split(new RegExp(`${esc}\\[\\d+A${esc}\\[0J`));
      expect(screens.length).toBeGreaterThan(1);
      const last = screens.at(-1)!;
      expect(last).toMatch(new RegExp(`^Rollout ${id} aborted `));
      const rows = last.slice(last.indexOf("WAVE "));
      expect(cell(rows, 1, "DEVICE STATE")).toBe("rolled back");
      expect(cell(rows, 2, "DEVICE STATE")).toBe("pending");
      // --team: the rollout must be that team's.
      expect(await ok(admin, "rollouts", "show", id, "--team", "ro")).toMatch(/^State +aborted$/m);
      await ok(admin, "teams", "create", "Other", "--slug", "other");
      const elsewhere = await admin.flowplane("rollouts", "show", id, "--team", "other");
      expect(elsewhere.status).toBe(1);
      expect(elsewhere.stderr).toBe(
        `error: no rollout in team other has the id "${id}" (not_found)\n`,
      );
      // An ended rollout cannot be aborted again: the API's error.
      const again = await admin.flowplane("rollouts", "abort", id);
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/^error: .+ \(invalid_rollout_state\)\n$/);
    } finally {
      await stop();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const device of devices.devices) await device.follow();
    for (const device of devices.devices) expect(device.runs).toBe(devices.snapshots[1]);
  });
});
