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
import { resolveDevice, resolveInstance } from "../resolve";

interface ListOptions {
  team?: string;
  json?: boolean;
  limit?: number;
  cursor?: string;
}

/** A page of the snapshots of the instance or the device the command line names. */
async function pageOf(
  client: Client,
  kind: "instance" | "device",
  given: string,
  { team, limit, cursor }: ListOptions,
): Promise<z.infer<typeof SnapshotList>> {
  return kind === "instance"
    ? client.snapshots.ofInstance.query({
        instanceId: (await resolveInstance(client, given, team)).id,
        limit,
        cursor,
      })
    : client.snapshots.ofDevice.query({
        deviceId: (await resolveDevice(client, given, team)).id,
        limit,
        cursor,
      });
}

/** `list` on `command` (the instance's or the device's argument, examples and description given). */
export function addSnapshotList(
  command: Command,
  context: Context,
  kind: "instance" | "device",
): void {
  withJson(
    command
      .option("--limit <n>", "how many (default 100)", positiveInteger)
      .option("--cursor <id>", "the page after this snapshot (the previous page's last)"),
  ).action(async (owner: string, options: ListOptions) => {
    const { client } = await context.connect();
    const page = await pageOf(client, kind, owner, options);
    if (options.json) return context.print(json(page));
    context.print(
      page.snapshots.length === 0
        ? `No snapshots of this ${kind}.\n`
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
