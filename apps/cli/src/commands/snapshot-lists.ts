// What the commands on an instance's snapshots (snapshots.ts) and on a device's
// (device-snapshots.ts) share: `list`, a page of them newest first, and the question `delete` asks.
import type { SnapshotList } from "@flowplane/contract";
import type { Command } from "commander";
import type { z } from "zod";
import type { Client } from "../client";
import type { Context } from "../context";
import { json, table, when } from "../output";
import { confirmOrStop } from "./ask-first";
import { positiveInteger, withJson } from "./options";

interface ListOptions {
  team?: string;
  json?: boolean;
  limit?: number;
  cursor?: string;
}

/**
 * `list` on `command` (the owner's argument, examples and description given): the page `list`
 * reads for the owner the command line names, or `none` when it holds no snapshot.
 */
export function addSnapshotList(
  command: Command,
  context: Context,
  none: string,
  list: (
    client: Client,
    owner: string,
    options: ListOptions,
  ) => Promise<z.infer<typeof SnapshotList>>,
): void {
  withJson(
    command
      .option("--limit <n>", "how many (default 100)", positiveInteger)
      .option("--cursor <id>", "the page after this snapshot (the previous page's last)"),
  ).action(async (owner: string, options: ListOptions) => {
    const { client } = await context.connect();
    const page = await list(client, owner, options);
    if (options.json) return context.print(json(page));
    context.print(
      page.snapshots.length === 0
        ? none
        : table(page.snapshots, [
            { header: "ID", value: (s) => s.id },
            { header: "NAME", value: (s) => s.name },
            { header: "TAKEN", value: (s) => when(s.createdAt) },
            { header: "BY", value: (s) => s.user?.username ?? "-" },
            { header: "DESCRIPTION", value: (s) => s.description },
          ]) + (page.meta.next_cursor ? `More: --cursor ${page.meta.next_cursor}\n` : ""),
    );
  });
}

/** `delete`'s question about the snapshot; anything but yes keeps it. */
export function confirmSnapshotDelete(
  context: Context,
  snapshot: { id: string; name: string },
): Promise<void> {
  return confirmOrStop(
    context,
    `Delete snapshot ${snapshot.name} (id ${snapshot.id}) for good?`,
    `${snapshot.name} was not deleted`,
  );
}
