// `flowplane events`: a team's events (docs/events.md), a page of them oldest first, or followed
// live as Server-Sent Events — one line each, or one JSON object a line with --json — resumed
// after the last one printed when the stream ends (the same `Last-Event-ID` the server keeps
// order by, so a reconnect misses nothing and repeats nothing).
import {
  FlowplaneClientError,
  followTeamEvents,
  listTeamEvents,
  type TeamEvent,
} from "@flowplane/client";
import { type Command, Option } from "commander";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { when } from "../output";
import { resolveTeam } from "../resolve";
import { collect, positiveInteger, teamCommand } from "./options";

/** How long a follower waits before it follows again after the stream ended. */
const RECONNECT_MS = 1000;

interface EventsOptions {
  team?: string;
  type?: string[];
  resourceType?: string;
  resourceId?: string;
  limit?: number;
  cursor?: string;
  follow?: boolean;
  json?: boolean;
  maxEvents?: number;
}

const about = (event: TeamEvent) =>
  event.resource.id === null ? event.resource.type : `${event.resource.type} ${event.resource.id}`;

/** One line: its time, type, what it is about and its id. */
const lineOf = (event: TeamEvent) =>
  `${when(event.createdAt)}  ${event.type}  ${about(event)}  #${event.id}\n`;

/** The team given, or the caller's only one. */
async function teamIdOf(client: Client, given: string | undefined): Promise<string> {
  if (given !== undefined) return (await resolveTeam(client, given)).id;
  const { teams } = await client.user.teams.query();
  if (teams.length === 1) return teams[0]!.id;
  throw new CliError(
    teams.length === 0 ? "You are in no team" : "You are in several teams: give --team",
    "invalid_request",
  );
}

const cliError = (error: unknown) =>
  error instanceof FlowplaneClientError
    ? new CliError(error.message, error.code, [], error.status)
    : error;

export function addEventsCommand(program: Command, context: Context): void {
  teamCommand(
    program,
    "events",
    [
      { does: "The team's events, oldest kept first", run: "events --team night" },
      {
        does: "Follow devices going offline and online as they happen",
        run: "events --team night --type device.offline,device.online --follow",
      },
      {
        does: "Every event of one device, as JSON lines",
        run: "events --team night --resource-type device --resource-id <deviceId> --json",
      },
    ],
    (command) =>
      command
        .description(
          "Read a team's events (viewers and up; each one as its audit log would show it to you): a page oldest first, or --follow them live",
        )
        .option("--type <type>", "only this type (comma-separated, or repeat for several)", collect)
        .addOption(
          new Option("--resource-type <kind>", "only events about this kind of resource").choices([
            "team",
            "application",
            "project",
            "device",
          ]),
        )
        .option("--resource-id <id>", "only events about this resource (with --resource-type)")
        .option("--limit <n>", "events per page (default 100, at most 1000)", positiveInteger)
        .option("--cursor <id>", "the events after this one")
        .option("--follow", "keep printing new events as they happen, until Ctrl-C")
        .addOption(new Option("--max-events <n>").argParser(positiveInteger).hideHelp()),
    { required: false, description: "the team's id, slug or name (default: your only team)" },
  ).action(async (options: EventsOptions) => {
    const { client, url, token } = await context.connect();
    const teamId = await teamIdOf(client, options.team);
    const query = {
      types: options.type?.flatMap((type) => type.split(",")).filter(Boolean),
      resourceType: options.resourceType,
      resourceId: options.resourceId,
    };
    const print = (event: TeamEvent) =>
      context.print(options.json ? `${JSON.stringify(event)}\n` : lineOf(event));

    if (!options.follow) {
      const page = await listTeamEvents({ url, token }, teamId, {
        ...query,
        limit: options.limit,
        cursor: options.cursor,
      }).catch((error: unknown) => {
        throw cliError(error);
      });
      if (!options.json && page.events.length === 0) context.print("No events.\n");
      for (const event of page.events) print(event as TeamEvent);
      if (!options.json && page.meta.next_cursor) {
        context.print(`\nmore: --cursor ${page.meta.next_cursor}\n`);
      }
      return;
    }

    // From --cursor, or else only new events; after the stream ends, again after the last printed.
    let after = options.cursor;
    let printed = 0;
    for (;;) {
      try {
        for await (const event of followTeamEvents({ url, token }, teamId, query, { after })) {
          print(event);
          after = event.id;
          if (options.maxEvents !== undefined && ++printed >= options.maxEvents) return;
        }
      } catch (error) {
        throw cliError(error);
      }
      context.tell("the stream ended: following again (Ctrl-C to stop)");
      await sleep(RECONNECT_MS);
    }
  });
}
