// `flowplane search`: FlowFuse's search of a team — its applications, instances and devices whose
// name (or id, description, type) contains the text, in any case.
import type { SearchResult } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../context";
import { type Column, json, table } from "../output";
import { resolveTeam } from "../resolve";
import { teamCommand } from "./options";

const COLUMNS: Column<SearchResult>[] = [
  { header: "KIND", value: (result) => result.object },
  { header: "NAME", value: (result) => result.name },
  { header: "ID", value: (result) => result.id },
];

export function addSearchCommand(program: Command, context: Context): void {
  teamCommand(
    program,
    "search",
    [
      { does: "Find what a team has named like 'line'", run: "search line --team night" },
      {
        does: "Find one by its id",
        run: "search 4jNp2bW8kQx1 --team night --json",
      },
    ],
    (command) =>
      command
        .description(
          "Search a team's applications, instances and devices by name (and id, description, " +
            "type), in any case (viewers and up)",
        )
        .argument("<query>", "the text to find"),
  ).action(async (query: string, options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const team = (await resolveTeam(client, options.team)).id;
    const found = await client.search.team.query({ team, query });
    context.print(
      options.json
        ? json(found)
        : found.count === 0
          ? "Nothing in the team matches.\n"
          : table(found.results, COLUMNS),
    );
  });
}
