// `flowplane devices move` and `flowplane devices delete`: one device or many of a team at once
// (PUT and DELETE /teams/{teamId}/devices/bulk) — moved to an application, a hosted instance or a
// device group, unassigned, taken out of their groups, or deleted (asked first). All or nothing:
// a device or target that is not the team's changes nothing. Devices are named by id, or by name
// in --team.
import type { Command } from "commander";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json } from "../output";
import { deviceIdOf } from "./devices";
import { withExamples } from "./examples";
import { applicationIdOf, instanceIdOf } from "./instances";
import { withJson, withTeam, withYes } from "./options";
import { teamIdOf } from "./teams/members";

interface MoveOptions {
  team: string;
  json?: boolean;
  application?: string;
  instance?: string;
  group?: string;
  unassign?: boolean;
  ungroup?: boolean;
}

/** The id of the team's device group named by id or by name. */
async function teamGroupIdOf(client: Client, teamId: string, group: string): Promise<string> {
  const { groups } = await client.deviceGroups.ofTeam.query({ teamId, query: group });
  return (
    (
      groups.find((g) => g.id === group) ??
      groups.find((g) => g.name.toLowerCase() === group.toLowerCase())
    )?.id ?? group
  );
}

/** Where `devices move` sends the devices: the bulk request's target. */
async function targetOf(client: Client, teamId: string, options: MoveOptions) {
  if (options.application !== undefined) {
    return { application: await applicationIdOf(client, options.application, options.team) };
  }
  if (options.instance !== undefined) {
    return { instance: await instanceIdOf(client, options.instance, options.team) };
  }
  if (options.group !== undefined) {
    return { deviceGroup: await teamGroupIdOf(client, teamId, options.group) };
  }
  if (options.unassign) return { application: null, instance: null };
  return { deviceGroup: "" };
}

export function addDeviceBulkCommands(devices: Command, context: Context): void {
  withJson(
    withTeam(
      withExamples(devices.command("move"), [
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
      ])
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
    ),
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
    const teamId = await teamIdOf(client, options.team);
    const ids = [];
    for (const name of names) ids.push(await deviceIdOf(client, name, options.team));
    const moved = await client.devices.bulkMove.mutate({
      teamId,
      devices: ids,
      ...(await targetOf(client, teamId, options)),
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
      withTeam(
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
        {
          required: false,
          description: "the devices' team, by id or slug, to name devices by their names",
        },
      ),
      "delete",
    ),
  ).action(
    async (
      names: string[],
      options: { team?: string; json?: boolean; yes?: boolean },
      command: Command,
    ) => {
      if (!options.yes && !context.canAsk()) {
        command.error(
          "error: devices delete asks before it deletes, and no terminal is there to answer: " +
            "give --yes to delete without asking",
          { exitCode: 2 },
        );
      }
      const { client } = await context.connect();
      const ids = [];
      for (const name of names) ids.push(await deviceIdOf(client, name, options.team));
      if (ids.length === 1) {
        const deviceId = ids[0]!;
        if (!options.yes) {
          const found = await client.devices.byId.query({ deviceId });
          if (!(await context.confirm(`Delete device ${found.name} (id ${found.id}) for good?`))) {
            throw new CliError(`${found.name} was not deleted`, "not_confirmed");
          }
        }
        const result = await client.devices.delete.mutate({ deviceId });
        return context.print(options.json ? json(result) : `Deleted device ${deviceId}.\n`);
      }
      const teamId =
        options.team !== undefined
          ? await teamIdOf(client, options.team)
          : (await client.devices.byId.query({ deviceId: ids[0]! })).team.id;
      if (!options.yes && !(await context.confirm(`Delete ${ids.length} devices for good?`))) {
        throw new CliError("No device was deleted", "not_confirmed");
      }
      const result = await client.devices.bulkDelete.mutate({ teamId, devices: ids });
      context.print(options.json ? json(result) : `Deleted ${ids.length} devices.\n`);
    },
  );
}
