// `flowplane devices snapshots`: snapshots of what a device runs — an application's device's own
// (listed, taken, deleted asked first), or, taken from an instance's device, the instance's.
import type { Command } from "commander";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json, table, when } from "../output";
import { deviceCommand } from "./devices";
import { positiveInteger, withJson, withYes } from "./options";
import { resolveDevice, resolveSnapshot } from "../resolve";
import { targetSet } from "./targets";

interface Options {
  team?: string;
  json?: boolean;
}

/** `devices snapshots …`: snapshots of what a device runs. */
export function addDeviceSnapshotsCommands(devices: Command, context: Context): void {
  const snapshots = devices
    .command("snapshots")
    .description(
      "Snapshots of what a device runs: an application's device's own, or its instance's",
    );

  withJson(
    deviceCommand(snapshots, "list", [
      {
        does: "A device's snapshots, newest first",
        run: "devices snapshots list line-1 --team night",
      },
    ])
      .description("An application's device's snapshots, newest first (viewers and up)")
      .option("--limit <n>", "how many (default 100)", positiveInteger)
      .option("--cursor <id>", "the page after this snapshot (the previous page's last)"),
  ).action(async (device: string, options: Options & { limit?: number; cursor?: string }) => {
    const { client } = await context.connect();
    const deviceId = (await resolveDevice(client, device, options.team)).id;
    const list = await client.snapshots.ofDevice.query({
      deviceId,
      limit: options.limit,
      cursor: options.cursor,
    });
    if (options.json) return context.print(json(list));
    context.print(
      list.snapshots.length === 0
        ? "No snapshots of this device.\n"
        : table(list.snapshots, [
            { header: "ID", value: (s) => s.id },
            { header: "NAME", value: (s) => s.name },
            { header: "TAKEN", value: (s) => when(s.createdAt) },
            { header: "BY", value: (s) => s.user?.username ?? "-" },
            { header: "DESCRIPTION", value: (s) => s.description },
          ]) + (list.meta.next_cursor ? `More: --cursor ${list.meta.next_cursor}\n` : ""),
    );
  });

  withJson(
    deviceCommand(snapshots, "create", [
      {
        does: "Keep what a device runs now (its flows, credentials, variables, modules)",
        run: 'devices snapshots create line-1 "As deployed" --team night',
      },
      {
        does: "Also make it the device's target, deployed at its next check-in",
        run: "devices snapshots create line-1 Pinned --set-as-target --team night",
      },
    ])
      .description(
        "Take a snapshot of what a device reports it runs (members and up): an application's " +
          "device's own, or, for an instance's device, the instance's",
      )
      .argument("<name>", "the snapshot's name")
      .option("--description <text>", "what it is")
      .option(
        "--set-as-target",
        "also make it the device's target (an instance's device: the instance's devices')",
      ),
  ).action(
    async (
      device: string,
      name: string,
      options: Options & { description?: string; setAsTarget?: boolean },
    ) => {
      const { client } = await context.connect();
      const deviceId = (await resolveDevice(client, device, options.team)).id;
      const found = await client.devices.byId.query({ deviceId });
      const input = {
        deviceId,
        name,
        description: options.description,
        setAsTarget: options.setAsTarget,
      };
      const taken =
        found.ownerType === "instance"
          ? await client.snapshots.ofInstanceDevice.mutate(input)
          : await client.snapshots.createOfDevice.mutate(input);
      if (options.json) return context.print(json(taken));
      context.print(
        `Took snapshot ${taken.name} (id ${taken.id}) of device ${found.name}` +
          (taken.project ? `, for instance ${taken.project.name}.\n` : ".\n"),
      );
      if (options.setAsTarget) {
        context.print(
          taken.project
            ? targetSet(`instance ${taken.project.name}'s devices'`, "each of its devices", taken)
            : targetSet(`device ${found.name}'s`, "the device", taken),
        );
      }
    },
  );

  withJson(
    withYes(
      deviceCommand(snapshots, "delete", [
        {
          does: "Delete one of a device's snapshots (asks first)",
          run: "devices snapshots delete line-1 Pinned --team night",
        },
      ])
        .description("Delete one of a device's snapshots (owners), asking first")
        .argument("<snapshot>", "the snapshot's id or name"),
      "delete",
    ),
  ).action(
    async (
      device: string,
      snapshot: string,
      options: Options & { yes?: boolean },
      command: Command,
    ) => {
      if (!options.yes && !context.canAsk()) {
        command.error(
          "error: devices snapshots delete asks before it deletes, and no terminal is there to " +
            "answer: give --yes to delete without asking",
          { exitCode: 2 },
        );
      }
      const { client } = await context.connect();
      const owner = await resolveDevice(client, device, options.team);
      const found = await resolveSnapshot(client, { device: owner }, snapshot);
      if (
        !options.yes &&
        !(await context.confirm(`Delete snapshot ${found.name} (id ${found.id}) for good?`))
      ) {
        throw new CliError(`${found.name} was not deleted`, "not_confirmed");
      }
      const result = await client.snapshots.deleteOfDevice.mutate({
        deviceId: owner.id,
        snapshotId: found.id,
      });
      context.print(
        options.json ? json(result) : `Deleted snapshot ${found.name} (id ${found.id}).\n`,
      );
    },
  );
}
