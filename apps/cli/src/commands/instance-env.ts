// `flowplane instances env`: an instance's environment variables, listed, set (a hidden one's
// value asked for, as a password is) and unset. They reach Node-RED when it next starts.
import type { EnvVar } from "@flowplane/contract";
import { type Command } from "commander";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json } from "../output";
import { instanceCommand, type InstanceOptions } from "./instance-command";
import { withJson } from "./options";
import { resolveInstance } from "../resolve";
import { assign, type Assignment, envTable, withAssignments } from "./env-vars";

/** `instances env list|set|unset`, under the `instances` group. */
export function addInstanceEnvCommands(instances: Command, context: Context): void {
  const env = instances
    .command("env")
    .description("An instance's environment variables (members and owners change them)");

  withJson(
    instanceCommand(env, "list", [
      {
        does: "List an instance's variables (hidden values blank)",
        run: "instances env list line-one",
      },
    ]).description("An instance's variables, and the platform's FF_* ones (viewers and up)"),
  ).action(async (instance: string, options: InstanceOptions) => {
    const { client } = await context.connect();
    const found = await client.instances.get.query({
      instanceId: (await resolveInstance(client, instance, options.team)).id,
    });
    if (options.json) return context.print(json(found.settings.env));
    context.print(envTable(found.settings.env));
  });

  withJson(
    withAssignments(
      instanceCommand(env, "set", [
        {
          does: "Set variables; restart the instance for Node-RED to see them",
          run: "instances env set line-one GREETING=hello LEVEL=3",
        },
        {
          does: "Set a hidden variable, its value asked for (or read from stdin)",
          run: "instances env set line-one API_KEY --hidden",
        },
      ]).description(
        "Set variables (members and owners); they reach Node-RED when it next starts (`instances restart`)",
      ),
    ),
  ).action(
    async (
      instance: string,
      assignments: Assignment[],
      options: InstanceOptions & { hidden?: boolean },
    ) => {
      const { client } = await context.connect();
      const { id: instanceId } = await resolveInstance(client, instance, options.team);
      const found = await client.instances.get.query({ instanceId });
      const env: EnvVar[] = found.settings.env.filter((v) => !v.name.startsWith("FF_"));
      await assign(context, env, assignments, options.hidden);
      const updated = await client.instances.update.mutate({ instanceId, settings: { env } });
      context.print(
        options.json
          ? json(updated.settings.env)
          : `Set ${assignments.map((a) => a.name).join(", ")} on ${found.name}; restart it for Node-RED to see them.\n`,
      );
    },
  );

  withJson(
    instanceCommand(env, "unset", [
      { does: "Remove variables from an instance", run: "instances env unset line-one GREETING" },
    ])
      .description("Remove variables (members and owners); Node-RED sees it when it next starts")
      .argument("<names...>", "the variables' names"),
  ).action(async (instance: string, names: string[], options: InstanceOptions) => {
    const { client } = await context.connect();
    const { id: instanceId } = await resolveInstance(client, instance, options.team);
    const found = await client.instances.get.query({ instanceId });
    const missing = names.filter((name) => !found.settings.env.some((v) => v.name === name));
    if (missing.length > 0) {
      throw new CliError(`${found.name} has no variable ${missing.join(", ")}`, "not_found");
    }
    const env = found.settings.env.filter(
      (v) => !v.name.startsWith("FF_") && !names.includes(v.name),
    );
    const updated = await client.instances.update.mutate({ instanceId, settings: { env } });
    context.print(
      options.json
        ? json(updated.settings.env)
        : `Removed ${names.join(", ")} from ${found.name}; restart it for Node-RED to see it.\n`,
    );
  });
}
