// `flowplane devices move` and `flowplane devices delete`: one device or many of a team at once
// (PUT and DELETE /teams/{teamId}/devices/bulk) — moved to an application, a hosted instance or a
// device group, unassigned, taken out of their groups, or deleted (asked first). All or nothing:
// a device or target that is not the team's changes nothing. Devices are named by id or name, in
// --team or else in all the caller's teams (resolve/).
import type { Command } from "commander";
import type { Client } from "../client";
import type { Context } from "../context";
import { json } from "../output";
import { withExamples } from "./examples";
import { teamCommand, withJson, withTeamToLookIn, withYes } from "./options";
import {
  resolveApplication,
  resolveDevice,
  resolveInstance,
  resolveTeam,
  resolveTeamDeviceGroup,
  type TeamRef,
} from "../resolve";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

interface MoveOptions {
  team: string;
  json?: boolean;
  application?: string;
  instance?: string;
  group?: string;
  unassign?: boolean;
  ungroup?: boolean;
}

/** Where `devices move` sends the devices: the bulk request's target. */
async function targetOf(client: Client, team: TeamRef, options: MoveOptions) {
  if (options.application !== undefined) {
    return { application: (await resolveApplication(client, options.application, team.id)).id };
  }
  if (options.instance !== undefined) {
    return { instance: (await resolveInstance(client, options.instance, team.id)).id };
  }
  if (options.group !== undefined) {
    return { deviceGroup: (await resolveTeamDeviceGroup(client, team, options.group)).id };
  }
  if (options.unassign) return { application: null, instance: null };
  return { deviceGroup: "" };
}

export function addDeviceBulkCommands(devices: Command, context: Context): void {
  teamCommand(
    devices,
    "move",
    [
      {
        does: "Assign devices to an application",
        run: "devices move line-1 line-2 --team night --application Line",
      },
      { does: "To a hosted instance", run: "devices move line-1 --team night --instance dev" },
      {
        does: "Into a device group of their application",
        run: "devices move line-1 line-2 --team night --group Line-A",
      },
      { does: "Out of their groups", run: "devices move line-1 --team night --ungroup" },
      { does: "Unassign them", run: "devices move line-1 --team night --unassign" },
    ],
    (command) =>
      command
        .description(
          "Move devices of the team (owners): to an application, a hosted instance or a device " +
            "group, out of their groups, or unassigned. All or nothing.",
        )
        .argument("<devices...>", "the devices' ids or names")
        .option("--application <app>", "to this application of the team (id or name)")
        .option("--instance <instance>", "to this hosted instance of the team (id or name)")
        .option("--group <group>", "into this device group of the team (id or name)")
        .option("--unassign", "from their application or instance (and their group)")
        .option("--ungroup", "out of their device groups"),
  ).action(async (names: string[], options: MoveOptions, command: Command) => {
    const given = [
      options.application !== undefined,
      options.instance !== undefined,
      options.group !== undefined,
      options.unassign === true,
      options.ungroup === true,
    ].filter(Boolean).length;
    if (given !== 1) {
      command.error(
        "error: give one of --application, --instance, --group, --unassign or --ungroup",
        { exitCode: 2 },
      );
    }
    const { client } = await context.connect();
    const team = await resolveTeam(client, options.team);
    const ids = [];
    for (const name of names) ids.push((await resolveDevice(client, name, team.id)).id);
    const moved = await client.devices.bulkMove.mutate({
      teamId: team.id,
      devices: ids,
      ...(await targetOf(client, team, options)),
    });
    if (options.json) return context.print(json(moved));
    context.print(
      moved.devices
        .map((d) => {
          const where = d.instance
            ? `instance ${d.instance.name}`
            : d.application
              ? `application ${d.application.name}`
              : "unassigned";
          const group = d.deviceGroup ? `, group ${d.deviceGroup.name}` : "";
          return `Device ${d.name} (id ${d.id}): ${where}${group}.\n`;
        })
        .join(""),
    );
  });

  withJson(
    withYes(
      withTeamToLookIn(
        withExamples(devices.command("delete"), [
          { does: "Delete a device (asks first)", run: "devices delete D1a2b3c4d5e6" },
          { does: "Several of a team", run: "devices delete line-1 line-2 --team night" },
          { does: "From a script", run: "devices delete D1a2b3c4d5e6 --yes" },
        ])
          .description(
            "Delete devices (owners), asking first: their tokens stop working at once. " +
              "Several are deleted together, or none is.",
          )
          .argument("<devices...>", "the devices' ids or names"),
        "the devices' team",
      ),
      "delete",
    ),
  ).action(
    async (
      names: string[],
      options: { team?: string; json?: boolean; yes?: boolean },
      command: Command,
    ) => {
      refuseUnanswerable(context, command, options.yes);
      const { client } = await context.connect();
      const found = [];
      for (const name of names) found.push(await resolveDevice(client, name, options.team));
      const ids = found.map((d) => d.id);
      if (found.length === 1) {
        const [{ id, name }] = found as [(typeof found)[number]];
        if (!options.yes) {
          await confirmOrStop(
            context,
            `Delete device ${name} (id ${id}) for good?`,
            `${name} was not deleted`,
          );
        }
        const result = await client.devices.delete.mutate({ deviceId: id });
        return context.print(options.json ? json(result) : `Deleted device ${name} (id ${id}).\n`);
      }
      const listed = found.map((d) => d.name).join(", ");
      if (!options.yes) {
        await confirmOrStop(context, `Delete devices ${listed} for good?`, "No device was deleted");
      }
      const result = await client.devices.bulkDelete.mutate({
        teamId: found[0]!.team.id,
        devices: ids,
      });
      context.print(options.json ? json(result) : `Deleted devices ${listed}.\n`);
    },
  );
}
