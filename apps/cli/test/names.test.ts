// One rule for naming things on the command line (src/resolve.ts), run as a user runs the CLI
// against the real server: a team, application, instance, device, snapshot or pipeline is named by
// its id, a team also by its slug, each by its name; a name that several things share is refused
// (exit 1, ambiguous_name) listing each (name, id, where), and a name that matches nothing is
// not_found saying what was looked for where. Also: times print one way, and setting a target
// snapshot says the device deploys it at its next check-in, not that it runs it.
// The server runs no Node-RED: what is checked is what the CLI names, not what it runs.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok as okAs, scratchDir, type User } from "./cli";
import { serveWithAdmin } from "./server";

let admin: User;
const ids: Record<string, string> = {};
const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;

const ok = (...args: string[]) => okAs(admin, ...args);

const idOf = async (...args: string[]) => JSON.parse(await ok(...args, "--json")).id as string;

/** The command's refusal of an ambiguous name: exit 1, the message, one line per candidate. */
async function ambiguous(args: string[], message: string, candidates: string[]) {
  const outcome = await admin.flowplane(...args);
  expect(outcome.status, outcome.stderr).toBe(1);
  expect(outcome.stdout).toBe("");
  const [first, ...rest] = outcome.stderr.trimEnd().split("\n");
  expect(first).toBe(`error: ${message}: give the id of the one you mean (ambiguous_name)`);
  expect(rest.map((line) => line.trim().replace(/ {2,}/g, " | ")).sort()).toEqual(
    [...candidates].sort(),
  );
}

async function notFound(args: string[], message: string) {
  expect(await admin.flowplane(...args)).toEqual({
    status: 1,
    stdout: "",
    stderr: `error: ${message} (not_found)\n`,
  });
}

serveWithAdmin((served) => ({ admin } = served));
beforeAll(async () => {
  // Two teams named Plant (slugs plant and plant-2) and one Depot; an application Line in each
  // of plant and depot; instances press (plant) and crane (depot).
  ids.plant = await idOf("teams", "create", "Plant", "--slug", "plant");
  ids.plant2 = await idOf("teams", "create", "Plant", "--slug", "plant-2");
  ids.depot = await idOf("teams", "create", "Depot", "--slug", "depot");
  ids.plantLine = await idOf("apps", "create", "Line", "--team", "plant");
  ids.depotLine = await idOf("apps", "create", "Line", "--team", "depot");
  ids.press = await idOf("instances", "create", "press", "--app", "Line", "--team", "plant");
  ids.crane = await idOf("instances", "create", "crane", "--app", "Line", "--team", "depot");
  // A device named sensor in each team.
  for (const team of ["plant", "depot"]) {
    ids[`${team}Sensor`] = await idOf(
      ...["devices", "create", "sensor", "--team", team, "--application", "Line"],
    );
  }
}, 120_000);

describe("teams", () => {
  it("by id, by slug and by name; the name in any case", async () => {
    for (const team of [ids.depot!, "depot", "Depot", "DEPOT"]) {
      expect(await ok("apps", "list", "--team", team), team).toMatch(/^\S+\s+Line\s/m);
    }
  });

  it("a name two teams share is refused, listing both with their slugs and ids", async () => {
    await ambiguous(
      ["apps", "list", "--team", "Plant"],
      '2 teams among your teams are named "Plant"',
      [`Plant | id ${ids.plant} | slug plant`, `Plant | id ${ids.plant2} | slug plant-2`],
    );
    // Its slug or id still names each.
    expect(await ok("apps", "list", "--team", "plant-2")).toBe("No applications in this team.\n");
  });

  it("a team that is nobody's is not found, naming what was looked for", async () => {
    await notFound(
      ["apps", "list", "--team", "Nowhere"],
      'no team among your teams has the id, slug or name "Nowhere"',
    );
  });

  it("output names the team as the person named it, not by its slug or id", async () => {
    const renamed = await ok("teams", "rename", "Depot", "Depot North");
    expect(renamed).toBe(`Renamed team Depot to Depot North (slug depot, id ${ids.depot}).\n`);
    await ok("teams", "rename", "depot", "Depot");
  });
});

describe("applications", () => {
  it("by id anywhere, and by name in the team given", async () => {
    const one = await ok("devices", "list", "--team", "plant", "--application", ids.plantLine!);
    expect(cell(one, 1, "NAME")).toBe("sensor");
    const other = await ok("devices", "list", "--team", "depot", "--application", "line");
    expect(cell(other, 1, "ID")).toBe(ids.depotSensor);
  });

  it("a name in two of your teams is refused without --team, listing each with its team", async () => {
    await ambiguous(
      ["pipelines", "create", "Release", "--application", "Line"],
      '2 applications in your teams are named "Line"',
      [`Line | id ${ids.plantLine} | in team Plant`, `Line | id ${ids.depotLine} | in team Depot`],
    );
  });

  it("no such application is not found in the team given", async () => {
    await notFound(
      ["apps", "delete", "Line 2", "--team", "depot"],
      'no application in team Depot has the id or name "Line 2"',
    );
  });
});

describe("instances", () => {
  it("by id or name, with --team or in all your teams", async () => {
    for (const args of [[ids.crane!], ["crane"], ["CRANE", "--team", "depot"]]) {
      expect(await ok("instances", "show", ...args)).toMatch(/^Name\s+crane$/m);
    }
  });

  it("one of another team is not found in the team given, by name or by id", async () => {
    for (const instance of ["crane", ids.crane!]) {
      await notFound(
        ["instances", "show", instance, "--team", "plant"],
        `no instance in team Plant has the id or name "${instance}"`,
      );
    }
  });
});

describe("devices", () => {
  it("by id anywhere, and by name in the team given", async () => {
    expect(await ok("devices", "show", ids.plantSensor!)).toMatch(/^Team\s+Plant \(plant\)$/m);
    expect(await ok("devices", "show", "sensor", "--team", "Depot")).toMatch(
      new RegExp(`^ID\\s+${ids.depotSensor}$`, "m"),
    );
  });

  it("a name in two teams is refused without --team, listing each with its team", async () => {
    await ambiguous(
      ["devices", "rename", "sensor", "sensor-1"],
      '2 devices in your teams are named "sensor"',
      [
        `sensor | id ${ids.plantSensor} | in team Plant`,
        `sensor | id ${ids.depotSensor} | in team Depot`,
      ],
    );
  });

  it("no such device is not found", async () => {
    await notFound(
      ["devices", "show", "sensor-9", "--team", "plant"],
      'no device in team Plant has the id or name "sensor-9"',
    );
  });
});

describe("snapshots", () => {
  let first: string;
  let second: string;

  beforeAll(async () => {
    const file = join(await scratchDir(), "export.json");
    await writeFile(file, JSON.stringify({ name: "Same", flows: { flows: [] }, settings: {} }));
    first = await idOf("snapshots", "import", "press", file);
    second = await idOf("snapshots", "import", "press", file);
    await idOf("snapshots", "import", "press", file, "--name", "Other");
  });

  it("by id or name among the instance's, and a name two share is refused", async () => {
    expect(await ok("snapshots", "show", "press", first)).toMatch(
      new RegExp(`^ID\\s+${first}$`, "m"),
    );
    expect(await ok("snapshots", "show", "press", "other")).toMatch(/^Name\s+Other$/m);
    const outcome = await admin.flowplane("snapshots", "show", "press", "Same");
    expect(outcome.status).toBe(1);
    expect(outcome.stderr).toMatch(
      /^error: 2 snapshots of instance press are named "Same": give the id of the one you mean \(ambiguous_name\)\n/,
    );
    for (const id of [first, second]) {
      expect(outcome.stderr).toMatch(
        new RegExp(`^  Same  id ${id}  taken \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC`, "m"),
      );
    }
  });

  it("no such snapshot is not found, and one of another instance is not the instance's", async () => {
    await notFound(
      ["snapshots", "delete", "press", "Gone", "--yes"],
      'no snapshot of instance press has the id or name "Gone"',
    );
    await notFound(
      ["snapshots", "show", "crane", first],
      `no snapshot of instance crane has the id or name "${first}"`,
    );
  });

  it("times print as YYYY-MM-DD HH:MM:SS UTC in lists and in show", async () => {
    const list = await ok("snapshots", "list", "press");
    expect(cell(list, 1, "TAKEN")).toMatch(TIME);
    const shown = await ok("snapshots", "show", "press", "Other");
    expect(/^Taken\s+(.+) by /m.exec(shown)![1]).toMatch(TIME);
    const teams = await ok("teams", "list", "--all");
    expect(cell(teams, 1, "CREATED")).toMatch(TIME);
    const devices = await ok("devices", "provisioning", "list", "--team", "plant");
    expect(devices).toBe("No provisioning tokens.\n");
    const log = await ok("audit-log", "--team", "plant", "--limit", "1");
    expect(cell(log, 1, "TIME")).toMatch(TIME);
  });

  it("setting an instance's devices' target says they deploy it at their next check-in", async () => {
    expect(await ok("snapshots", "target", "press", "Other")).toMatch(
      /^Set instance press's devices' target snapshot to Other \(id \w+\); each of its devices deploys it at its next check-in \(agents check in every minute by default\)\.\n$/,
    );
    expect(await ok("snapshots", "target", "press", "--clear")).toBe(
      "Cleared instance press's devices' target snapshot; each of its devices learns of it at " +
        "its next check-in (agents check in every minute by default).\n",
    );
  });
});

describe("pipelines and their stages", () => {
  beforeAll(async () => {
    for (const team of ["plant", "depot"]) {
      await ok("pipelines", "create", "Release", "--application", "Line", "--team", team);
    }
    await ok(
      ...["pipelines", "stages", "add", "Release", "Dev", "--instance", "press"],
      ...["--team", "plant"],
    );
  });

  it("by name in the team given, a stage by its name in the pipeline", async () => {
    const shown = await ok("pipelines", "show", "release", "--team", "plant");
    expect(shown).toMatch(/^Pipeline\s+Release \(\w+\)$/m);
    expect(cell(shown.slice(shown.indexOf("ID")), 1, "INSTANCE")).toBe("press");
    expect(
      await ok(
        ...["pipelines", "stages", "update", "Release", "dev", "--name", "Development"],
        "--team",
        "plant",
      ),
    ).toMatch(/^Updated stage Development \(\w+\)\.\n$/);
  });

  it("a name in two of your teams is refused, listing each with its application and team", async () => {
    const listed = JSON.parse(await ok("pipelines", "list", "--team", "plant", "--json"));
    const other = JSON.parse(await ok("pipelines", "list", "--team", "depot", "--json"));
    await ambiguous(
      ["pipelines", "show", "Release"],
      '2 pipelines in your teams are named "Release"',
      [
        `Release | id ${listed.pipelines[0].id} | in application Line of team Plant`,
        `Release | id ${other.pipelines[0].id} | in application Line of team Depot`,
      ],
    );
    // By id, it needs no team.
    expect(await ok("pipelines", "show", other.pipelines[0].id)).toContain("No stages.");
  });

  it("no such pipeline or stage is not found", async () => {
    await notFound(
      ["pipelines", "delete", "Ship", "--team", "plant", "--yes"],
      'no pipeline in team Plant has the id or name "Ship"',
    );
    await notFound(
      ["pipelines", "stages", "delete", "Release", "Prod", "--team", "plant", "--yes"],
      'no stage in pipeline Release has the id or name "Prod"',
    );
  });
});
