// What the commands on an instance's snapshots (snapshots.ts) and on a device's
// (device-snapshots.ts) share: `list`, a page of them newest first, and `delete`, asking first.
import type { SnapshotList } from "@flowplane/contract";
import type { Command } from "commander";
import type { z } from "zod";
import type { Client } from "../client";
import type { Context } from "../context";
import { json, table, when } from "../output";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";
import { positiveInteger, withJson, withYes } from "./options";
import { resolveDevice, resolveInstance, resolveSnapshot } from "../resolve";

interface ListOptions {
  team?: string;
  json?: boolean;
  limit?: number;
  cursor?: string;
}

/** A page of the snapshots of the instance or the device the command line names. */
async function listSnapshotPage(
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
    const page = await listSnapshotPage(client, kind, owner, options);
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

/** `delete` on `command` (the instance's or the device's argument, examples and description given). */
export function addSnapshotDelete(
  command: Command,
  context: Context,
  kind: "instance" | "device",
): void {
  withJson(withYes(command.argument("<snapshot>", "the snapshot's id or name"), "delete")).action(
    async (
      given: string,
      snapshot: string,
      options: { team?: string; json?: boolean; yes?: boolean },
      command: Command,
    ) => {
      refuseUnanswerable(context, command, options.yes);
      const { client } = await context.connect();
      const owner =
        kind === "instance"
          ? await resolveInstance(client, given, options.team)
          : await resolveDevice(client, given, options.team);
      const found = await resolveSnapshot(
        client,
        kind === "instance" ? { instance: owner } : { device: owner },
        snapshot,
      );
      if (!options.yes) {
        await confirmOrStop(
          context,
          `Delete snapshot ${found.name} (id ${found.id}) for good?`,
          `${found.name} was not deleted`,
        );
      }
      const result =
        kind === "instance"
          ? await client.snapshots.deleteOfInstance.mutate({
              instanceId: owner.id,
              snapshotId: found.id,
            })
          : await client.snapshots.deleteOfDevice.mutate({
              deviceId: owner.id,
              snapshotId: found.id,
            });
      context.print(
        options.json ? json(result) : `Deleted snapshot ${found.name} (id ${found.id}).\n`,
      );
    },
  );
}
