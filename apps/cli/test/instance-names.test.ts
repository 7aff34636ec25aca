// `flowplane instances` naming an instance in a team (--team, on every command of the group as on
// `instances list`), and `instances delete` asking first: at a terminal, or --yes for a script.
// The server runs no Node-RED: what is checked is which instance the CLI names, not what it runs.
import { beforeAll, describe, expect, it } from "vitest";
import { ok as okAs, terminal, type User } from "./cli";
import { serveWithAdmin } from "./server";

let admin: User;
const ids: Record<string, string> = {};

serveWithAdmin((served) => ({ admin } = served));
beforeAll(async () => {
  for (const team of ["plant", "depot"]) {
    await ok("teams", "create", team, "--slug", team);
    await ok("apps", "create", "Line", "--team", team);
  }
  for (const [name, team] of [
    ["press", "plant"],
    ["lathe", "plant"],
    ["crane", "depot"],
  ]) {
    const created = await ok(
      "instances",
      "create",
      name!,
      "--app",
      "Line",
      "--team",
      team!,
      "--json",
    );
    ids[name!] = JSON.parse(created).id;
  }
});

const ok = (...args: string[]) => okAs(admin, ...args);

const exists = async (name: string) =>
  JSON.parse(
    await ok("instances", "list", "--team", name === "crane" ? "depot" : "plant", "--json"),
  ).instances.some((row: { instance: { name: string } }) => row.instance.name === name);

describe("instances named in a team", () => {
  it("show takes --team as list does, and finds the instance there by name or id", async () => {
    const shown = await ok("instances", "show", "press", "--team", "plant");
    expect(shown).toMatch(/^Name\s+press$/m);
    expect(shown).toMatch(/^Team\s+plant \(plant\)$/m);
    expect(await ok("instances", "show", ids.crane!, "--team", "depot")).toMatch(/^Name\s+crane$/m);
    // Before the subcommand's arguments as after them.
    expect(await ok("instances", "show", "--team", "plant", "lathe")).toMatch(/^Name\s+lathe$/m);
  });

  it("an instance of another team is not found in the team given, by name or by id (exit 1)", async () => {
    for (const instance of ["crane", ids.crane!]) {
      expect(await admin.flowplane("instances", "show", instance, "--team", "plant")).toEqual({
        status: 1,
        stdout: "",
        stderr: `error: no instance in team plant has the id or name "${instance}" (not_found)\n`,
      });
    }
  });

  it("every command on one instance takes --team: env, logs and the actions", async () => {
    expect(await ok("instances", "env", "set", "press", "MODE=fast", "--team", "plant")).toContain(
      "Set MODE on press",
    );
    expect(await ok("instances", "env", "list", "press", "--team", "plant")).toMatch(
      /^MODE\s+fast$/m,
    );
    expect(await ok("instances", "env", "unset", "press", "MODE", "--team", "plant")).toContain(
      "Removed MODE from press",
    );
    // Without a runtime, the actions and the log are the API's 503: the instance was found.
    for (const args of [["start"], ["logs"]]) {
      const outcome = await admin.flowplane("instances", ...args, "press", "--team", "plant");
      expect(outcome.stderr, args.join(" ")).toMatch(/\(runtime_unavailable\)\n$/);
    }
  });
});

describe("instances delete", () => {
  it("without a terminal and without --yes refuses before contacting the server (exit 2), and deletes nothing", async () => {
    const refused = await admin.flowplane("instances", "delete", "lathe", "--team", "plant");

    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(
      "error: instances delete asks before it deletes, and no terminal is there to answer: " +
        "give --yes to delete without asking\n",
    );
    expect(await exists("lathe")).toBe(true);
  });

  it("at a terminal asks first, naming the instance and its team; anything but yes keeps it (exit 1)", async () => {
    for (const answer of ["n", "", "yess"]) {
      const kept = await admin.flowplaneWith(terminal(answer), "instances", "delete", "lathe");

      expect(kept.status, answer).toBe(1);
      expect(kept.stdout).toBe("");
      expect(kept.stderr).toBe(
        `Delete instance lathe (id ${ids.lathe}) of team plant? Its Node-RED stops; its flows, ` +
          "files and log are deleted for good. [y/N] " +
          "error: lathe was not deleted (not_confirmed)\n",
      );
    }
    expect(await exists("lathe")).toBe(true);
  });

  it("at a terminal answered yes deletes it", async () => {
    const deleted = await admin.flowplaneWith(terminal("Y"), "instances", "delete", "lathe");

    expect(deleted.status).toBe(0);
    expect(deleted.stdout).toBe("Deleted instance lathe.\n");
    expect(await exists("lathe")).toBe(false);
  });

  it("--yes deletes without asking, as a script does", async () => {
    const deleted = await admin.flowplane(
      ...["instances", "delete", "crane", "--team", "depot", "--yes"],
    );

    expect(deleted).toEqual({ status: 0, stdout: "Deleted instance crane.\n", stderr: "" });
    expect(await exists("crane")).toBe(false);
  });
});
