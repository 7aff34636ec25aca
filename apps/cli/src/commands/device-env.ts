// `env list|set|unset` under `devices` and `device-groups`: the variables a device (or every member
// of a group) runs Node-RED with, read and written through the settings operations. Hidden values
// are never shown: the API returns them blank, and a blank hidden value sent back keeps its value,
// so setting one variable never disturbs the others.
import type { EnvVar } from "@flowplane/contract";
import type { Command } from "commander";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json } from "../output";
import type { Example } from "./examples";
import { withJson } from "./options";
import { assign, type Assignment, envTable, withAssignments } from "./env-vars";

/** Where the variables live: a device, or a device group. */
export interface EnvHolder<Options> {
  /** `devices` or `device-groups`, as the examples write it. */
  group: string;
  /** A command of the `env` group, with the holder's argument and options. */
  command(env: Command, name: string, examples: readonly Example[]): Command;
  /** An example's argument and options naming a holder. */
  example: string;
  /** Who may read them and who may change them, for the help. */
  readers: string;
  changers: string;
  /** When the holder's Node-RED sees a change, for the messages. */
  takesEffect: string;
  /** The holder's variables, read and written. */
  open(
    client: Client,
    holder: string,
    options: Options,
  ): Promise<{ read(): Promise<EnvVar[]>; write(env: EnvVar[]): Promise<void> }>;
}

export function addEnvCommands<Options extends { json?: boolean }>(
  parent: Command,
  context: Context,
  holder: EnvHolder<Options>,
): void {
  const env = parent
    .command("env")
    .description(`Environment variables (${holder.changers} change them)`);
  const at = async (name: string, options: Options) => {
    const { client } = await context.connect();
    return holder.open(client, name, options);
  };

  withJson(
    holder
      .command(env, "list", [
        {
          does: "The variables (hidden values are never shown)",
          run: `${holder.group} env list ${holder.example}`,
        },
      ])
      .description(`The variables (${holder.readers}); hidden values are shown as (hidden)`),
  ).action(async (name: string, options: Options) => {
    const vars = await (await at(name, options)).read();
    if (options.json) return context.print(json(vars));
    context.print(vars.length === 0 ? "No variables.\n" : envTable(vars));
  });

  withJson(
    withAssignments(
      holder
        .command(env, "set", [
          {
            does: "Set variables",
            run: `${holder.group} env set ${holder.example} GREETING=hello LEVEL=3`,
          },
          {
            does: "Set a hidden variable, its value asked for (or read from stdin)",
            run: `${holder.group} env set ${holder.example} API_KEY --hidden`,
          },
        ])
        .description(`Set variables (${holder.changers}); ${holder.takesEffect}`),
    ),
  ).action(
    async (name: string, assignments: Assignment[], options: Options & { hidden?: boolean }) => {
      const vars = await at(name, options);
      const next = await vars.read();
      await assign(context, next, assignments, options.hidden);
      await vars.write(next);
      context.print(
        options.json
          ? json(await vars.read())
          : `Set ${assignments.map((a) => a.name).join(", ")} on ${name}; ${holder.takesEffect}.\n`,
      );
    },
  );

  withJson(
    holder
      .command(env, "unset", [
        { does: "Remove variables", run: `${holder.group} env unset ${holder.example} GREETING` },
      ])
      .description(`Remove variables (${holder.changers}); ${holder.takesEffect}`)
      .argument("<names...>", "the variables' names"),
  ).action(async (name: string, names: string[], options: Options) => {
    const vars = await at(name, options);
    const before = await vars.read();
    const missing = names.filter((variable) => !before.some((v) => v.name === variable));
    if (missing.length > 0) {
      throw new CliError(`${name} has no variable ${missing.join(", ")}`, "not_found");
    }
    await vars.write(before.filter((v) => !names.includes(v.name)));
    context.print(
      options.json
        ? json(await vars.read())
        : `Removed ${names.join(", ")} from ${name}; ${holder.takesEffect}.\n`,
    );
  });
}
