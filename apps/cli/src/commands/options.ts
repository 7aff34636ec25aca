// Options and argument parsers more than one command shares. A bad value is a usage error (exit 2),
// caught before anything is sent.
import { type Command, InvalidArgumentError, Option } from "commander";
import { ServerUrl } from "../config";
import { type Example, withExamples } from "./examples";

export function withJson(command: Command): Command {
  return command.option("--json", "print the API's JSON, for scripts");
}

const teamOptions = new WeakSet<Option>();

/**
 * `--team <team>`: the team a command acts in, by id, slug or name. A group of commands that acts in a
 * team (`instances`, `members`, `invitations`, `broker clients`) takes it on every command, so that
 * a user who gives it to one can give it to the next: the tests walk every command of the program
 * to hold each group to that. Required where nothing else names the team.
 */
export function withTeam(
  command: Command,
  { required = true, description = "the team's id, slug or name" } = {},
): Command {
  const option = new Option("--team <team>", description);
  if (required) option.makeOptionMandatory();
  teamOptions.add(option);
  return command.addOption(option);
}

/** `--team` to look a name up in, optional: without it, the name is looked for in all your teams. */
export function withTeamToLookIn(command: Command, whose: string): Command {
  return withTeam(command, {
    required: false,
    description: `${whose}, by id, slug or name (default: look in all your teams)`,
  });
}

/** A command on one thing (`instance`, `device`): `<instance>`, and --team to look it up in. */
export function commandOnOne(
  kind: string,
  group: Command,
  name: string,
  examples: readonly Example[],
): Command {
  return withTeamToLookIn(
    withExamples(group.command(name), examples).argument(`<${kind}>`, `the ${kind}'s id or name`),
    `the ${kind}'s team`,
  );
}

/** A command in an application (`device-groups`, `rollouts`): --application, and --team to name it by name. */
export function applicationCommand(
  group: Command,
  name: string,
  examples: readonly Example[],
): Command {
  return withTeamToLookIn(
    withExamples(group.command(name), examples).requiredOption(
      "--application <app>",
      "the application's id or name",
    ),
    "the application's team",
  );
}

/** `--application` and `--instance` assign to one or the other, not both (exit 2). */
export function needOneAssignment(
  command: Command,
  options: { application?: string; instance?: string },
): void {
  if (options.application !== undefined && options.instance !== undefined) {
    command.error("error: give --application or --instance, not both", { exitCode: 2 });
  }
}

/**
 * A command that acts in a team: its examples, what `build` adds (a description, arguments, its
 * own options), then --team (required, unless `team` says otherwise; `lookIn`: withTeamToLookIn's)
 * and --json, in that order, as its help lists them.
 */
export function teamCommand(
  group: Command,
  name: string,
  examples: readonly Example[],
  build: (command: Command) => Command = (command) => command,
  team?: Parameters<typeof withTeam>[1] | { lookIn: string },
): Command {
  const command = build(withExamples(group.command(name), examples));
  return withJson(
    team && "lookIn" in team ? withTeamToLookIn(command, team.lookIn) : withTeam(command, team),
  );
}

/** Whether `option` is the team a command acts in (not, say, a token's team restriction). */
export function isTeamOption(option: Option): boolean {
  return teamOptions.has(option);
}

/** `--yes`: the answer to a command's question, for scripts (no terminal to ask at). */
export function withYes(command: Command, what: string): Command {
  return command.option("--yes", `${what} without asking (scripts must give it)`);
}

export function serverUrl(value: string): string {
  const result = ServerUrl.safeParse(value);
  if (!result.success) throw new InvalidArgumentError("Not an http:// or https:// URL.");
  return result.data;
}

/** Epoch milliseconds (as FlowFuse takes them) or any date and time, sent as ISO-8601. */
export function expiry(value: string): number | string {
  if (/^\d+$/.test(value)) return Number(value);
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw new InvalidArgumentError("Not a time: give ISO-8601 (2027-01-31T18:00Z) or epoch ms.");
  }
  return new Date(time).toISOString();
}

export function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError("Not a positive whole number.");
  }
  return Number(value);
}

/** For options that may be given more than once. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
