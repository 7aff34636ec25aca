// `flowplane audit-log`: a team's audit log (owners), the platform's (administrators) or your own,
// a page at a time or followed as it grows.
import type { AuditLog, AuditLogEntry } from "@flowplane/contract";
import { type Command, InvalidArgumentError, Option } from "commander";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "../client";
import type { Context } from "../context";
import { type Column, json, table, when } from "../output";
import { collect, positiveInteger, teamCommand } from "./options";
import { resolveTeam } from "../resolve";

const FOLLOW_INTERVAL_MS = 2000;
/**
 * An entry's time is its transaction's start, so one that commits late can appear below entries
 * already seen: following keeps looking this far back, and remembers what it printed.
 */
const SETTLE_MS = 10_000;

interface AuditLogOptions {
  team?: string;
  admin?: boolean;
  app?: string;
  instance?: string;
  event?: string[];
  username?: string;
  query?: string;
  limit?: number;
  cursor?: string;
  follow?: boolean;
  json?: boolean;
  maxPolls?: number;
  pollInterval?: number;
}

type Filters = { event?: string[]; username?: string; query?: string };
type Page = { limit?: number; cursor?: string };
type Reader = (page: Page) => Promise<AuditLog>;

const who = (entry: AuditLogEntry) =>
  entry.trigger.type === "system" ? "(platform)" : entry.trigger.name;
const about = (entry: AuditLogEntry) =>
  entry.scope.id === null ? entry.scope.type : `${entry.scope.type} ${entry.scope.id}`;

const ENTRY_COLUMNS: Column<AuditLogEntry>[] = [
  { header: "TIME", value: (entry) => when(entry.createdAt) },
  { header: "EVENT", value: (entry) => entry.event },
  { header: "BY", value: who },
  { header: "ABOUT", value: about },
  { header: "ID", value: (entry) => entry.id },
];

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not a whole number.");
  return Number(value);
}

export function addAuditLogCommand(program: Command, context: Context): void {
  teamCommand(
    program,
    "audit-log",
    [
      { does: "Your own account's log: sign-ins, tokens, password changes", run: "audit-log" },
      {
        does: "A team's log (owners), by its slug, id or name, only renames and new members",
        run: "audit-log --team night --event team.settings.updated --event team.user.added",
      },
      {
        does: "Follow the platform's log as it grows (an administrator's token with admin opt-in)",
        run: "audit-log --admin --follow",
      },
      {
        does: "An instance's log (viewers and up): its starts, stops, deploys and snapshots",
        run: "audit-log --instance <instanceId>",
      },
      {
        does: "Everything alice did in a team, as JSON",
        run: "audit-log --team <teamId> --username alice --json",
      },
    ],
    (command) =>
      command
        .description(
          "Read an audit log, newest first: a team's (--team, owners), an application's (--app, owners), an instance's (--instance), the platform's (--admin), or else your own account's",
        )
        .option("--admin", "the platform's log (an administrator's token with admin opt-in)")
        .option("--app <applicationId>", "an application's log (its team's owners)")
        .option("--instance <instanceId>", "an instance's log (its team's viewers and up)")
        .option("--event <name>", "only this event (repeat for several)", collect)
        .option("--username <name>", "only what this user did")
        .option("--query <text>", "only entries whose event, body or user contains this text")
        .option("--limit <n>", "entries per page (default 100, at most 1000)", positiveInteger)
        .option("--cursor <cursor>", "the page after this cursor")
        .option("--follow", "keep printing new entries, oldest first, until Ctrl-C")
        .addOption(new Option("--max-polls <n>").argParser(nonNegativeInteger).hideHelp())
        .addOption(new Option("--poll-interval <ms>").argParser(positiveInteger).hideHelp()),
    { required: false, description: "a team's log (its owners), by the team's id, slug or name" },
  ).action(async (options: AuditLogOptions, command: Command) => {
    const logs = [options.team, options.admin, options.app, options.instance];
    if (logs.filter((given) => given !== undefined).length > 1) {
      command.error("error: --team, --app, --instance and --admin name different logs: give one", {
        exitCode: 2,
      });
    }
    if (options.follow && options.cursor !== undefined) {
      command.error("error: --follow starts at the newest entries: drop --cursor", {
        exitCode: 2,
      });
    }
    const { client } = await context.connect();
    const filters: Filters = {
      event: options.event,
      username: options.username,
      query: options.query,
    };
    const read = await reader(client, options, filters);

    if (options.follow) return follow(context, read, options);
    const page = await read({ limit: options.limit, cursor: options.cursor });
    if (options.json) return context.print(json(page));
    context.print(page.log.length === 0 ? "No entries.\n" : table(page.log, ENTRY_COLUMNS));
    if (page.meta.next_cursor) {
      const more = page.count > page.log.length ? ` of ${page.count}` : "";
      context.print(
        `\n${page.log.length}${more} entries; older ones: --cursor ${page.meta.next_cursor}\n`,
      );
    }
  });
}

/** The log the options name, as a function of the page. */
async function reader(client: Client, options: AuditLogOptions, filters: Filters): Promise<Reader> {
  if (options.admin) return (page) => client.auditLog.platform.query({ ...filters, ...page });
  const { app: applicationId, instance: instanceId } = options;
  if (applicationId !== undefined) {
    return (page) => client.auditLog.application.query({ applicationId, ...filters, ...page });
  }
  if (instanceId !== undefined) {
    return (page) => client.auditLog.instance.query({ instanceId, ...filters, ...page });
  }
  if (options.team === undefined)
    return (page) => client.auditLog.user.query({ ...filters, ...page });
  const teamId = (await resolveTeam(client, options.team)).id;
  return (page) => client.auditLog.team.query({ teamId, ...filters, ...page });
}

/**
 * Prints the newest page oldest first, then every `interval` the entries that came since, oldest
 * first: one line each, or one JSON object a line with --json.
 */
async function follow(context: Context, read: Reader, options: AuditLogOptions): Promise<void> {
  const limit = options.limit ?? 100;
  const interval = options.pollInterval ?? FOLLOW_INTERVAL_MS;
  const printed = new Map<string, number>();
  const print = (entries: readonly AuditLogEntry[]) => {
    for (const entry of [...entries].reverse()) {
      printed.set(entry.id, Date.parse(entry.createdAt));
      context.print(
        options.json
          ? `${JSON.stringify(entry)}\n`
          : `${when(entry.createdAt)}  ${entry.event}  ${who(entry)}  ${about(entry)}\n`,
      );
    }
  };
  const first = await read({ limit });
  print(first.log);
  // Older than the first page is history, not news.
  const floor = first.meta.next_cursor ? Date.parse(first.log.at(-1)!.createdAt) : 0;

  for (let poll = 0; options.maxPolls === undefined || poll < options.maxPolls; poll++) {
    await sleep(interval);
    const newest = Math.max(0, ...printed.values());
    const horizon = Math.max(floor, newest - SETTLE_MS);
    const fresh: AuditLogEntry[] = [];
    let cursor: string | undefined;
    // Newest first, back to the horizon: usually one page.
    pages: do {
      const page = await read({ limit, cursor });
      for (const entry of page.log) {
        if (Date.parse(entry.createdAt) < horizon) break pages;
        if (!printed.has(entry.id)) fresh.push(entry);
      }
      cursor = page.meta.next_cursor;
    } while (cursor);
    print(fresh);
    for (const [id, at] of printed) if (at < horizon) printed.delete(id);
  }
}
