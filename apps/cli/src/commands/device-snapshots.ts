// `flowplane devices snapshots`: snapshots of what a device runs — an application's device's own
// (listed, taken, deleted asked first), or, taken from an instance's device, the instance's.
import type { Command } from "commander";
import type { Context } from "../context";
import { json } from "../output";
import { deviceCommand } from "./devices";
import { withJson } from "./options";
import { resolveDevice } from "../resolve";
import { targetSet } from "./targets";
import { addSnapshotDelete, addSnapshotList } from "./owned-snapshots";

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

  addSnapshotList(
    deviceCommand(snapshots, "list", [
      {
        does: "A device's snapshots, newest first",
        run: "devices snapshots list line-1 --team night",
      },
    ]).description("An application's device's snapshots, newest first (viewers and up)"),
    context,
    "device",
  );

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

  addSnapshotDelete(
    deviceCommand(snapshots, "delete", [
      {
        does: "Delete one of a device's snapshots (asks first)",
        run: "devices snapshots delete line-1 Pinned --team night",
      },
    ]).description("Delete one of a device's snapshots (owners), asking first"),
    context,
    "device",
  );
}
