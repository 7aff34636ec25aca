import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { examplesUnder } from "../src/commands/examples";
import { isTeamOption } from "../src/commands/options";
import { createContext, type Io } from "../src/context";
import { createProgram } from "../src/program";
import { newUser } from "./cli";

/** The program `run` builds, writing nowhere. */
function program(): Command {
  const io: Io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {} };
  return createProgram(createContext(io), io);
}

/** Every command under `command`, depth first, with the words that name it after `flowplane`. */
function commandsUnder(
  command: Command,
  words: string[] = [],
): { command: Command; words: string[] }[] {
  return command.commands.flatMap((sub) => {
    const named = [...words, sub.name()];
    return [{ command: sub, words: named }, ...commandsUnder(sub, named)];
  });
}

/** The ones that do something, rather than group others (`teams`). */
const leavesOf = (command: Command) =>
  commandsUnder(command).filter((entry) => entry.command.commands.length === 0);

/** An example's command line as a shell splits it (its quotes are double quotes). */
const argv = (line: string) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);

describe("the flowplane command line", () => {
  it("--help lists the commands on stdout and exits 0", async () => {
    const help = await (await newUser()).flowplane("--help");

    expect(help.status).toBe(0);
    for (const command of ["login", "logout", "whoami", "teams", "tokens", "users"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
  });

  it("--version prints the package's version", async () => {
    expect(await (await newUser()).flowplane("--version")).toEqual({
      status: 0,
      stdout: `${packageJson.version}\n`,
      stderr: "",
    });
  });

  it("every command takes --json", async () => {
    const user = await newUser();
    for (const command of [
      ["login"],
      ["whoami"],
      ["teams", "list"],
      ["teams", "create"],
      ["teams", "rename"],
      ["tokens", "list"],
      ["tokens", "create"],
      ["tokens", "revoke"],
      ["users", "list"],
      ["users", "create"],
      ["users", "suspend"],
      ["users", "unsuspend"],
      ["users", "delete"],
      ["audit-log"],
      ["team-types", "list"],
      ["team-types", "show"],
      ["team-types", "create"],
      ["team-types", "update"],
      ["team-types", "delete"],
      ["invitations", "resend"],
      ["invitations", "revoke"],
    ]) {
      expect((await user.flowplane(...command, "--help")).stdout).toContain("--json");
    }
  });

  it("an unknown command, an unknown option or no command at all is a usage error (exit 2)", async () => {
    const user = await newUser();
    const unknown = await user.flowplane("teams", "delete", "x");
    const option = await user.flowplane("whoami", "--verbose");
    const nothing = await user.flowplane();

    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("error: unknown command 'delete'");
    expect(option.status).toBe(2);
    expect(option.stderr).toContain("error: unknown option '--verbose'");
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toContain("Usage: flowplane");
  });

  it("a FLOWPLANE_URL that is not a URL is reported without echoing it (exit 1), and --help still works", async () => {
    const user = await newUser({ FLOWPLANE_URL: "token-like-secret", FLOWPLANE_TOKEN: "t" });
    const whoami = await user.flowplane("whoami");

    expect(whoami.status).toBe(1);
    expect(whoami.stderr).toMatch(/^error: FLOWPLANE_URL: .*\(invalid_config\)\n$/);
    expect(whoami.stderr).not.toContain("token-like-secret");
    expect((await user.flowplane("whoami", "--help")).status).toBe(0);
  });
});

describe("options shared by a group of commands", () => {
  /** Every group of commands (`instances`, `instances env`), not the program's own list. */
  const groups = commandsUnder(program()).filter((entry) => entry.command.commands.length > 0);
  const leaves = (group: Command) => group.commands.filter((sub) => sub.commands.length === 0);
  const takesTeam = (command: Command) => command.options.some(isTeamOption);

  it("in a group where one command takes --team (the team it acts in), every command does", () => {
    const acting = groups.filter(({ command }) => leaves(command).some(takesTeam));

    expect(acting.map(({ words }) => words.join(" "))).toEqual(
      expect.arrayContaining([
        "apps",
        "instances",
        "instances env",
        "members",
        "invitations",
        "broker clients",
      ]),
    );
    for (const { command, words } of acting) {
      for (const leaf of leaves(command)) {
        expect(takesTeam(leaf), `flowplane ${words.join(" ")} ${leaf.name()} takes no --team`).toBe(
          true,
        );
      }
    }
  });

  it("--team reaches the command it is given to, after its arguments as before them", async () => {
    for (const { command, words } of commandsUnder(program())) {
      if (!takesTeam(command)) continue;
      // The command's first example, without a --team of its own: a command line it accepts.
      const example = argv(examplesUnder(command)[0]!.run);
      const at = example.indexOf("--team");
      const bare = at < 0 ? example : [...example.slice(0, at), ...example.slice(at + 2)];
      for (const line of [
        [...bare, "--team", "given"],
        [...words, "--team", "given", ...bare.slice(words.length)],
      ]) {
        // The same program with every action replaced: nothing is sent anywhere.
        const parsed = program();
        let team: unknown;
        for (const leaf of leavesOf(parsed)) {
          leaf.command.action((...args: unknown[]) => {
            team = (args.at(-1) as Command).opts().team;
          });
        }
        await parsed.parseAsync(["node", "flowplane", ...line]);

        expect(team, line.join(" ")).toBe("given");
      }
    }
  });
});

describe("examples in the help", () => {
  const leaves = leavesOf(program());

  it("every command has an example of its own, which starts with the command's name", () => {
    expect(leaves.map((leaf) => leaf.words.join(" "))).toEqual(
      expect.arrayContaining([
        "login",
        "logout",
        "whoami",
        "teams list",
        "tokens revoke",
        "users list",
        "users create",
        "users suspend",
        "users unsuspend",
        "users delete",
      ]),
    );
    for (const { command, words } of leaves) {
      const examples = examplesUnder(command);
      expect(examples, `flowplane ${words.join(" ")} has no example`).not.toHaveLength(0);
      for (const example of examples) {
        expect(argv(example.run).slice(0, words.length)).toEqual(words);
      }
    }
  });

  it("--help ends with the examples of every command, each under a comment saying what it does", async () => {
    const help = await (await newUser()).flowplane("--help");
    const all = leaves.flatMap((leaf) => examplesUnder(leaf.command));

    expect(help.status).toBe(0);
    expect(help.stdout.split("\nExamples:\n")[1]).toBe(
      all.map((example) => `  # ${example.does}\n  flowplane ${example.run}\n`).join("\n"),
    );
  });

  it("each command's own --help shows its examples, and a group's those of its commands", async () => {
    const user = await newUser();
    for (const { command, words } of commandsUnder(program())) {
      const help = await user.flowplane(...words, "--help");

      expect(help.status).toBe(0);
      expect(help.stdout).toContain("\nExamples:\n");
      for (const example of examplesUnder(command)) {
        expect(help.stdout).toContain(`\n  flowplane ${example.run}\n`);
      }
    }
  });

  it("every example is a command line that the command it is shown for accepts", async () => {
    for (const { command, words } of leaves) {
      for (const example of examplesUnder(command)) {
        // The same program with every action replaced: nothing is sent anywhere.
        const parsed = program();
        let ran: string | undefined;
        for (const leaf of leavesOf(parsed)) {
          leaf.command.action(() => void (ran = leaf.words.join(" ")));
        }
        await parsed.parseAsync(["node", "flowplane", ...argv(example.run)]);

        expect(ran, example.run).toBe(words.join(" "));
      }
    }
  });
});
