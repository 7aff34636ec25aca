// `flowplane teams`: the caller's teams (or, for administrators, every team), create and rename.
import { roleName, type Team, type UserTeam } from "@flowplane/contract";
import type { Command } from "commander";
import { apiFailure } from "../../client";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { type Column, json, table, when } from "../../output";
import { withExamples } from "../examples";
import { printPage } from "../pages";
import { resolveTeam, resolveTeamType } from "../../resolve";
import { positiveInteger, withJson } from "../options";

const MY_TEAM_COLUMNS: Column<UserTeam>[] = [
  { header: "ID", value: (team) => team.id },
  { header: "NAME", value: (team) => team.name },
  { header: "SLUG", value: (team) => team.slug },
  { header: "ROLE", value: (team) => roleName(team.role) ?? String(team.role) },
  { header: "MEMBERS", value: (team) => String(team.memberCount) },
  { header: "TYPE", value: (team) => team.type.name },
];

const TEAM_COLUMNS: Column<Team>[] = [
  { header: "ID", value: (team) => team.id },
  { header: "NAME", value: (team) => team.name },
  { header: "SLUG", value: (team) => team.slug },
  { header: "MEMBERS", value: (team) => String(team.memberCount) },
  { header: "TYPE", value: (team) => team.type.name },
  { header: "CREATED", value: (team) => when(team.createdAt) },
];

interface ListOptions {
  all?: boolean;
  limit?: number;
  cursor?: string;
  json?: boolean;
}

export function addTeamsCommands(program: Command, context: Context): void {
  const teams = program.command("teams").description("List, create and rename teams");

  withJson(
    withExamples(teams.command("list"), [
      { does: "List your teams, with your role in each", run: "teams list" },
      {
        does: "List every team, 50 a page, as JSON (an administrator's token with admin opt-in)",
        run: "teams list --all --limit 50 --json",
      },
    ])
      .description("Your teams and your role in each")
      .option("--all", "every team on the platform (an administrator's token with admin opt-in)")
      .option("--limit <n>", "with --all: teams per page (default 100)", positiveInteger)
      .option("--cursor <cursor>", "with --all: the page after this cursor"),
  ).action(async (options: ListOptions, command: Command) => {
    if (options.all) return listEveryTeam(context, options);
    if (options.limit !== undefined || options.cursor !== undefined) {
      command.error("error: --limit and --cursor page through --all", { exitCode: 2 });
    }
    const { client } = await context.connect();
    const list = await client.user.teams.query();
    if (options.json) context.print(json(list));
    else
      context.print(list.teams.length === 0 ? "No teams.\n" : table(list.teams, MY_TEAM_COLUMNS));
  });

  withJson(
    withExamples(teams.command("create"), [
      { does: "Create a team with its own slug", run: 'teams create "Night Shift" --slug night' },
      {
        does: "Create a team of a type other than the default (see `team-types list`)",
        run: "teams create Trial --type Small",
      },
    ])
      .description("Create a team; you become its owner")
      .argument("<name>", "the team's name")
      .option("--slug <slug>", "its URL-safe name (default: made from the name)")
      .option(
        "--type <type>",
        "its team type, by name or id (default: the active type listed first)",
      ),
  ).action(async (name: string, options: { slug?: string; type?: string; json?: boolean }) => {
    const { client } = await context.connect();
    const type =
      options.type === undefined ? undefined : (await resolveTeamType(client, options.type)).id;
    const team = await client.team.create.mutate({ name, slug: options.slug, type });
    context.print(
      options.json ? json(team) : `Created team ${team.name} (slug ${team.slug}, id ${team.id}).\n`,
    );
  });

  withJson(
    withExamples(teams.command("rename"), [
      { does: "Rename a team, keeping its slug", run: 'teams rename night "Late Shift"' },
    ])
      .description("Rename a team (owners)")
      .argument("<team>", "the team's id, slug or name")
      .argument("<name>", "its new name")
      .option("--slug <slug>", "a new URL-safe name as well"),
  ).action(async (given: string, name: string, options: { slug?: string; json?: boolean }) => {
    const { client } = await context.connect();
    const found = await resolveTeam(client, given);
    const team = await client.team.update.mutate({ teamId: found.id, name, slug: options.slug });
    context.print(
      options.json
        ? json(team)
        : `Renamed team ${found.name} to ${team.name} (slug ${team.slug}, id ${team.id}).\n`,
    );
  });
}

async function listEveryTeam(context: Context, options: ListOptions): Promise<void> {
  const { client } = await context.connect();
  const page = await client.team.all
    .query({ limit: options.limit, cursor: options.cursor })
    .catch((error: unknown) => {
      const failure = apiFailure(error);
      // The API says only `unauthorized`, which tells nobody what is missing.
      if (failure instanceof CliError && failure.status === 403) {
        throw new CliError(failure.message, failure.code, [
          "every team is listed only for an administrator's token with admin opt-in",
        ]);
      }
      throw failure;
    });
  printPage(
    context,
    page,
    page.teams,
    { columns: TEAM_COLUMNS, none: "No teams.\n", what: "teams" },
    options.json,
  );
}
