// `flowplane snapshots`: an instance's snapshots — taken, listed, shown, renamed, deleted (asked
// first), exported to a file with credentials encrypted under a secret the user types, imported
// from such a file, rolled back to, and set as the snapshot the instance's devices run. Every
// command names the instance (by id or name, looked up in --team or in all the caller's teams);
// a snapshot by its id or its name among the instance's (resolve/).
import type { Snapshot } from "@flowplane/contract";
import type { Command } from "commander";
import { readFile } from "node:fs/promises";
import type { Context } from "../context";
import { CliError } from "../errors";
import { fields, json, when } from "../output";
import { instanceCommand } from "./instance-command";
import { writePrivate } from "./private-file";
import { withJson } from "./options";
import { resolveInstance, resolveSnapshot } from "../resolve";
import { targetChanged, targetSet } from "./targets";
import { addSnapshotDelete, addSnapshotList } from "./owned-snapshots";

interface Options {
  team?: string;
  json?: boolean;
}

function describe(snapshot: Snapshot): string {
  return fields([
    ["ID", snapshot.id],
    ["Name", snapshot.name],
    ["Description", snapshot.description || "-"],
    ["Instance", snapshot.project ? `${snapshot.project.name} (${snapshot.project.id})` : "-"],
    ["Taken", `${when(snapshot.createdAt)} by ${snapshot.user?.username ?? "a deleted user"}`],
    [
      "Modules",
      Object.entries(snapshot.modules)
        .map(([name, version]) => `${name}@${version}`)
        .join(", ") || "none",
    ],
  ]);
}

export function addSnapshotsCommands(program: Command, context: Context): void {
  /** The instance, and the snapshot of it, that a command line names. */
  async function named(instance: string, snapshot: string, options: Options) {
    const { client } = await context.connect();
    const found = await resolveInstance(client, instance, options.team);
    const taken = await resolveSnapshot(client, { instance: found }, snapshot);
    return { instance: found, snapshot: taken, instanceId: found.id, snapshotId: taken.id };
  }

  const snapshots = program
    .command("snapshots")
    .description(
      "An instance's snapshots: take, list, export, import, roll back, set the devices' target",
    );

  addSnapshotList(
    instanceCommand(snapshots, "list", [
      { does: "An instance's snapshots, newest first", run: "snapshots list line-one" },
    ]).description("An instance's snapshots, newest first (viewers and up)"),
    context,
    "instance",
  );

  withJson(
    instanceCommand(snapshots, "create", [
      {
        does: "Take a snapshot of what an instance runs now",
        run: 'snapshots create line-one "Before the upgrade"',
      },
      {
        does: "Also make it the target its devices deploy at their next check-in",
        run: "snapshots create line-one Release-3 --set-as-target",
      },
    ])
      .description(
        "Take a snapshot: the instance's flows, credentials, variables and modules (members and up)",
      )
      .argument("<name>", "the snapshot's name")
      .option("--description <text>", "what it is")
      .option("--set-as-target", "also make it the target snapshot of the instance's devices"),
  ).action(
    async (
      instance: string,
      name: string,
      options: Options & { description?: string; setAsTarget?: boolean },
    ) => {
      const { client } = await context.connect();
      const owner = await resolveInstance(client, instance, options.team);
      const taken = await client.snapshots.create.mutate({
        instanceId: owner.id,
        name,
        description: options.description,
        setAsTarget: options.setAsTarget,
      });
      if (options.json) return context.print(json(taken));
      context.print(`Took snapshot ${taken.name} (id ${taken.id}).\n`);
      if (options.setAsTarget) {
        context.print(targetSet(`instance ${owner.name}'s devices'`, "each of its devices", taken));
      }
    },
  );

  withJson(
    instanceCommand(snapshots, "show", [
      { does: "One of an instance's snapshots", run: "snapshots show line-one Release-3" },
    ])
      .description("One of an instance's snapshots (viewers and up)")
      .argument("<snapshot>", "the snapshot's id or name"),
  ).action(async (instance: string, snapshot: string, options: Options) => {
    const { client } = await context.connect();
    const { instanceId, snapshotId } = await named(instance, snapshot, options);
    const found = await client.snapshots.ofInstanceById.query({ instanceId, snapshotId });
    context.print(options.json ? json(found) : describe(found));
  });

  withJson(
    instanceCommand(snapshots, "rename", [
      {
        does: "Rename a snapshot and change its description",
        run: 'snapshots rename line-one Release-3 "Release 3" --description "as shipped"',
      },
    ])
      .description(
        "Rename a snapshot or change its description; its content never changes (owners)",
      )
      .argument("<snapshot>", "the snapshot's id or name")
      .argument("<name>", "its new name")
      .option("--description <text>", "its new description"),
  ).action(
    async (
      instance: string,
      snapshot: string,
      name: string,
      options: Options & { description?: string },
    ) => {
      const { client } = await context.connect();
      // The snapshot must be the instance's: another's is not found, as an unknown one.
      const found = (await named(instance, snapshot, options)).snapshot;
      const renamed = await client.snapshots.update.mutate({
        snapshotId: found.id,
        name,
        description: options.description,
      });
      context.print(
        options.json
          ? json(renamed)
          : `Renamed snapshot ${found.name} (id ${found.id}) to ${name}.\n`,
      );
    },
  );

  addSnapshotDelete(
    instanceCommand(snapshots, "delete", [
      { does: "Delete a snapshot (asks first)", run: "snapshots delete line-one Release-3" },
      {
        does: "From a script, which has no terminal to answer",
        run: "snapshots delete line-one Release-3 --yes",
      },
    ]).description("Delete one of an instance's snapshots (owners), asking first"),
    context,
    "instance",
  );

  withJson(
    instanceCommand(snapshots, "export", [
      {
        does: "Export a snapshot to a file; its credentials are encrypted with a secret you type",
        run: "snapshots export line-one Release-3 --output release-3.json",
      },
    ])
      .summary("Export a snapshot to a file, its credentials encrypted with your secret")
      .description(
        "Export a snapshot to a file (members and up): its flows, variables, modules, and its " +
          "credentials and hidden variables encrypted with a secret (8 characters or more) asked " +
          "for at the terminal, or read from stdin's first line. Keep the secret apart from the " +
          "file: `snapshots import` needs it.",
      )
      .argument("<snapshot>", "the snapshot's id or name")
      .requiredOption("--output <file>", "the file to write (created; readable by you alone)"),
  ).action(async (instance: string, snapshot: string, options: Options & { output: string }) => {
    const { client } = await context.connect();
    const { instanceId, snapshotId } = await named(instance, snapshot, options);
    const credentialSecret = await context.readSecret("Secret to encrypt the credentials with: ", {
      confirm: "The same secret again: ",
    });
    const exported = await client.snapshots.exportOfInstance.mutate({
      instanceId,
      snapshotId,
      credentialSecret,
    });
    await writePrivate(options.output, `${JSON.stringify(exported, null, 2)}\n`);
    context.print(
      options.json
        ? json({ status: "okay", file: options.output })
        : `Exported snapshot ${exported.name} to ${options.output}.\n`,
    );
  });

  withJson(
    instanceCommand(snapshots, "import", [
      {
        does: "Import an exported snapshot into an instance; the export's secret is asked for",
        run: "snapshots import line-two release-3.json",
      },
    ])
      .description(
        "Import an exported snapshot as a new snapshot of the instance (owners); roll back to it " +
          "to run it. The secret it was exported with is asked for when it holds credentials.",
      )
      .argument("<file>", "the file `snapshots export` wrote")
      .option("--name <name>", "the new snapshot's name (default: the exported one's)"),
  ).action(async (instance: string, file: string, options: Options & { name?: string }) => {
    let exported: {
      name?: string;
      description?: string;
      flows?: { flows?: unknown[]; credentials?: unknown };
      settings?: Record<string, unknown>;
    };
    try {
      exported = JSON.parse(await readFile(file, "utf8")) as typeof exported;
    } catch (error) {
      throw new CliError(
        `cannot read ${file} as an export: ${(error as Error).message}`,
        "invalid_file",
      );
    }
    const { client } = await context.connect();
    const instanceId = (await resolveInstance(client, instance, options.team)).id;
    const settings = exported.settings ?? {};
    const secret =
      exported.flows?.credentials !== undefined || settings.secretEnv !== undefined
        ? await context.readSecret("The secret the snapshot was exported with: ")
        : undefined;
    const { hiddenEnv, secretEnv, env, modules } = settings as Record<string, never>;
    const imported = await client.snapshots.import.mutate({
      ownerId: instanceId,
      ownerType: "instance",
      snapshot: {
        name: options.name ?? exported.name ?? file,
        description: exported.description,
        flows: exported.flows as never,
        settings: {
          settings: settings.settings as never,
          env,
          hiddenEnv,
          secretEnv,
          modules,
        },
      },
      credentialSecret: secret,
    });
    context.print(
      options.json ? json(imported) : `Imported snapshot ${imported.name} (id ${imported.id}).\n`,
    );
  });

  withJson(
    instanceCommand(snapshots, "rollback", [
      {
        does: "Roll an instance back to one of its snapshots; it restarts on it",
        run: "snapshots rollback line-one Release-3",
      },
    ])
      .description(
        "Roll an instance back to one of its snapshots: its flows, credentials, variables and " +
          "modules; a running instance restarts on them, and keeps what it had if it cannot " +
          "(members and up)",
      )
      .argument("<snapshot>", "the snapshot's id or name"),
  ).action(async (instance: string, snapshot: string, options: Options) => {
    const { client } = await context.connect();
    const { instance: found, snapshot: target } = await named(instance, snapshot, options);
    const result = await client.snapshots.rollback.mutate({
      instanceId: found.id,
      snapshot: target.id,
    });
    context.print(
      options.json
        ? json(result)
        : `${found.name} rolled back to snapshot ${target.name} (id ${target.id}).\n`,
    );
  });

  withJson(
    instanceCommand(snapshots, "target", [
      { does: "The target snapshot of an instance's devices", run: "snapshots target line-one" },
      {
        does: "Set it (a snapshot of the instance's application)",
        run: "snapshots target line-one Release-3",
      },
      { does: "Clear it", run: "snapshots target line-one --clear" },
    ])
      .description(
        "Show or set the target snapshot of an instance's devices, which each deploys at its next " +
          "check-in (read: viewers; set: members and up)",
      )
      .argument("[snapshot]", "the snapshot's id or name, to set it")
      .option("--clear", "clear it"),
  ).action(
    async (
      instance: string,
      snapshot: string | undefined,
      options: Options & { clear?: boolean },
      command: Command,
    ) => {
      if (snapshot !== undefined && options.clear) {
        command.error("error: give a snapshot or --clear, not both", { exitCode: 2 });
      }
      const { client } = await context.connect();
      const found = await resolveInstance(client, instance, options.team);
      const instanceId = found.id;
      if (snapshot === undefined && !options.clear) {
        const settings = await client.snapshots.deviceSettings.query({ instanceId });
        return context.print(
          options.json ? json(settings) : `${settings.targetSnapshot ?? "No target snapshot"}\n`,
        );
      }
      const target =
        snapshot === undefined
          ? undefined
          : await resolveSnapshot(client, { instance: found }, snapshot);
      const result = await client.snapshots.setDeviceTarget.mutate({
        instanceId,
        targetSnapshot: target?.id ?? null,
      });
      if (options.json) return context.print(json(result));
      const owner = `instance ${found.name}'s devices'`;
      context.print(targetChanged(owner, "each of its devices", target));
    },
  );
}
