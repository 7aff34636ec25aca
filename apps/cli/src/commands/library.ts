// `flowplane library`: the team library every Node-RED instance of a team shows in its library
// panel (flows, functions, templates): list, show, save from a file, delete.
import type { LibraryEntrySummary } from "@flowplane/contract";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import type { Context } from "../context";
import { CliError } from "../errors";
import { type Column, json, when } from "../output";
import { withExamples } from "./examples";
import { printEvery } from "./pages";
import { teamCommand, withJson, withTeam, withYes } from "./options";
import { listEvery, resolveTeam } from "../resolve";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

const COLUMNS: Column<LibraryEntrySummary>[] = [
  { header: "TYPE", value: (entry) => entry.type },
  { header: "PATH", value: (entry) => entry.path },
  { header: "UPDATED", value: (entry) => when(entry.updatedAt) },
];

interface Options {
  team: string;
  json?: boolean;
}

export function addLibraryCommands(program: Command, context: Context): void {
  const library = program
    .command("library")
    .description(
      "The team library: flows, functions and templates every instance of a team shares",
    );

  teamCommand(
    library,
    "list",
    [
      { does: "Every entry of a team's library", run: "library list --team night" },
      {
        does: "The flows in one folder and below it",
        run: "library list --type flows --path shared --team night",
      },
    ],
    (command) =>
      command
        .description("Entries of the team library, without their bodies (viewers and up)")
        .option("--type <type>", "only this type: flows, functions, templates, …")
        .option("--path <folder>", "only this folder and below it"),
  ).action(async (options: Options & { type?: string; path?: string }) => {
    const { client } = await context.connect();
    const teamId = (await resolveTeam(client, options.team)).id;
    const all = await listEvery("entries", (cursor) =>
      client.library.list.query({
        teamId,
        type: options.type,
        path: options.path,
        cursor,
      }),
    );
    printEvery(
      context,
      "entries",
      all,
      { columns: COLUMNS, none: "The team library has no such entries.\n" },
      options.json,
    );
  });

  teamCommand(
    library,
    "show",
    [
      {
        does: "Print a flow of the team library (its JSON, to save or import)",
        run: "library show flows shared/starter.json --team night",
      },
    ],
    (command) =>
      command
        .description("An entry's body, as it is (viewers and up); --json adds its meta")
        .argument("<type>", "flows, functions, templates, …")
        .argument("<path>", "the entry's path: folder/name"),
  ).action(async (type: string, path: string, options: Options) => {
    const { client } = await context.connect();
    const teamId = (await resolveTeam(client, options.team)).id;
    const entry = await client.library.get.query({ teamId, type, path });
    context.print(
      options.json ? json(entry) : entry.body.endsWith("\n") ? entry.body : `${entry.body}\n`,
    );
  });

  teamCommand(
    library,
    "save",
    [
      {
        does: "Share a flow exported from Node-RED with every instance of the team",
        run: "library save flows shared/starter.json --file starter.json --team night",
      },
      {
        does: "A function with two outputs",
        run: "library save functions tools/split --file split.js --meta '{\"outputs\":2}' --team night",
      },
    ],
    (command) =>
      command
        .description("Create or replace an entry from a file (members and owners)")
        .argument("<type>", "flows, functions, templates, …")
        .argument("<path>", "the entry's path: folder/name")
        .requiredOption("--file <file>", "the entry's body: a flow's JSON, a function's code, …")
        .option("--meta <json>", "what Node-RED keeps beside the body, as a JSON object"),
  ).action(
    async (
      type: string,
      path: string,
      options: Options & { file: string; meta?: string },
      command: Command,
    ) => {
      let meta: Record<string, unknown> | undefined;
      if (options.meta !== undefined) {
        try {
          meta = JSON.parse(options.meta) as Record<string, unknown>;
        } catch {
          command.error("error: --meta is not JSON", { exitCode: 2 });
        }
        if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
          command.error("error: --meta must be a JSON object", { exitCode: 2 });
        }
      }
      const body = await readFile(options.file, "utf8").catch((error: NodeJS.ErrnoException) => {
        throw new CliError(
          `cannot read ${options.file}: ${error.code ?? error.message}`,
          "file_unreadable",
        );
      });
      const { client } = await context.connect();
      const teamId = (await resolveTeam(client, options.team)).id;
      const saved = await client.library.save.mutate({ teamId, type, path, body, meta });
      context.print(
        options.json ? json(saved) : `Saved ${type} ${saved.path} in the team library.\n`,
      );
    },
  );

  withJson(
    withYes(
      withTeam(
        withExamples(library.command("delete"), [
          {
            does: "Delete an entry (asks first)",
            run: "library delete flows shared/old.json --team night",
          },
          {
            does: "Delete a folder and all in it, from a script",
            run: "library delete flows drafts --team night --yes",
          },
        ])
          .description(
            "Delete an entry, or a folder and all in it (members and owners). Asked at the " +
              "terminal first; without a terminal, only with --yes.",
          )
          .argument("<type>", "flows, functions, templates, …")
          .argument("<path>", "an entry, or a folder"),
      ),
      "delete",
    ),
  ).action(
    async (type: string, path: string, options: Options & { yes?: boolean }, command: Command) => {
      refuseUnanswerable(context, command, options.yes);
      const { client } = await context.connect();
      const teamId = (await resolveTeam(client, options.team)).id;
      if (!options.yes) {
        await confirmOrStop(
          context,
          `Delete ${type} ${path} (and all in it, if it is a folder) from the team library?`,
          `${path} was not deleted`,
        );
      }
      const result = await client.library.delete.mutate({ teamId, type, path });
      context.print(
        options.json
          ? json(result)
          : `Deleted ${result.deleteCount} entr${result.deleteCount === 1 ? "y" : "ies"}.\n`,
      );
    },
  );
}
