// `flowplane devices provisioning`: a team's provisioning tokens (owners). A device agent started
// with one registers itself as a new device of the team, assigned to the token's application or
// instance: the way to put many devices on the platform without creating each first. The token is
// shown once, at creation, with the device.yml the agent starts from.
import type { ProvisioningTokenSummary } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { z } from "zod";
import type { Context } from "../context";
import { json, table, when } from "../output";
import { type Example, withExamples } from "./examples";
import { needOneAssignment, withJson, withTeam, withYes } from "./options";
import { writePrivate } from "./private-file";
import {
  resolveApplication,
  resolveAssignment,
  resolveInstance,
  resolveProvisioningToken,
  resolveTeam,
} from "../resolve";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";
import { deviceYml } from "./device-yml";

type Summary = z.infer<typeof ProvisioningTokenSummary>;

interface Options {
  team: string;
  json?: boolean;
}

/** Any date and time, sent as ISO-8601. */
function time(value: string): string {
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) {
    throw new InvalidArgumentError("Not a time: give ISO-8601, e.g. 2027-01-31T18:00Z.");
  }
  return new Date(parsed).toISOString();
}

const assigned = (t: Summary) =>
  t.application ? `application ${t.application}` : t.instance ? `instance ${t.instance}` : "-";

function tokenCommand(group: Command, name: string, examples: readonly Example[]): Command {
  return withTeam(withExamples(group.command(name), examples));
}

export function addProvisioningCommands(devices: Command, context: Context): void {
  const provisioning = devices
    .command("provisioning")
    .description(
      "The team's provisioning tokens (owners): devices started with one register themselves",
    );

  withJson(
    tokenCommand(provisioning, "list", [
      { does: "The team's provisioning tokens", run: "devices provisioning list --team night" },
    ]).description("The team's provisioning tokens (owners); never their values"),
  ).action(async (options: Options) => {
    const { client } = await context.connect();
    const list = await client.provisioningTokens.list.query({
      teamId: (await resolveTeam(client, options.team)).id,
    });
    if (options.json) return context.print(json(list));
    context.print(
      list.tokens.length === 0
        ? "No provisioning tokens.\n"
        : table(list.tokens, [
            { header: "ID", value: (t) => t.id },
            { header: "NAME", value: (t) => t.name },
            { header: "ASSIGNS TO", value: assigned },
            { header: "EXPIRES", value: (t) => (t.expiresAt ? when(t.expiresAt) : "never") },
            { header: "CREATED", value: (t) => when(t.createdAt) },
          ]),
    );
  });

  withJson(
    tokenCommand(provisioning, "create", [
      {
        does: "A token whose devices join an application; printed once, as the agent's device.yml",
        run: "devices provisioning create line-a --team night --application Line",
      },
      {
        does: "Write the agent's device.yml (readable by you alone), the token ending in a week",
        run: "devices provisioning create line-b --team night --expires 2027-01-31T18:00Z --output device.yml",
      },
    ])
      .description(
        "Create a provisioning token (owners). Its value is shown once and never again: printed, " +
          "or written with the team and the platform's URL to the agent's device.yml (--output).",
      )
      .argument("<name>", "the token's name (letters, digits, spaces, '-' and '_')")
      .option("--application <app>", "devices it creates join this application (id or name)")
      .option("--instance <instance>", "devices it creates join this hosted instance (id or name)")
      .option("--expires <time>", "when it stops working (ISO-8601); default: never", time)
      .option("--output <file>", "write the agent's device.yml here (created, mode 0600)"),
  ).action(
    async (
      name: string,
      options: Options & {
        application?: string;
        instance?: string;
        expires?: string;
        output?: string;
      },
      command: Command,
    ) => {
      needOneAssignment(command, options);
      const { client, url } = await context.connect();
      const teamId = (await resolveTeam(client, options.team)).id;
      const created = await client.provisioningTokens.create.mutate({
        teamId,
        name,
        ...(await resolveAssignment(client, options, options.team)),
        expiresAt: options.expires,
      });
      // The device.yml an agent starts from with this token.
      const yml = deviceYml(
        {
          provisioningName: created.name,
          provisioningTeam: teamId,
          provisioningToken: created.token,
        },
        url,
      );
      if (options.output !== undefined) {
        await writePrivate(options.output, yml);
        return context.print(
          options.json
            ? json({ ...created, token: undefined, file: options.output })
            : `Created provisioning token ${created.name} (id ${created.id}); the agent's device.yml is ${options.output}.\n`,
        );
      }
      context.print(
        options.json
          ? json(created)
          : `Created provisioning token ${created.name} (id ${created.id}). Shown this once, as the agent's device.yml:\n` +
              yml,
      );
    },
  );

  withJson(
    tokenCommand(provisioning, "update", [
      {
        does: "Devices it creates from now on join another application",
        run: "devices provisioning update line-a --team night --application Line-2",
      },
      {
        does: "No assignment and no expiry",
        run: "devices provisioning update line-a --team night --unassign --no-expiry",
      },
    ])
      .description(
        "Change what a provisioning token assigns its devices to, or its expiry (owners)",
      )
      .argument("<token>", "the token's id or name")
      .option("--application <app>", "assign its devices to this application (id or name)")
      .option("--instance <instance>", "assign its devices to this hosted instance (id or name)")
      .option("--unassign", "assign its devices to nothing")
      .option("--expires <time>", "when it stops working (ISO-8601)", time)
      .option("--no-expiry", "it never stops working"),
  ).action(
    async (
      token: string,
      options: Options & {
        application?: string;
        instance?: string;
        unassign?: boolean;
        expires?: string;
        expiry: boolean;
      },
      command: Command,
    ) => {
      const assignments = [options.application, options.instance, options.unassign].filter(
        (given) => given !== undefined,
      );
      if (assignments.length > 1) {
        command.error("error: give one of --application, --instance and --unassign", {
          exitCode: 2,
        });
      }
      if (options.expires !== undefined && !options.expiry) {
        command.error("error: give --expires or --no-expiry, not both", { exitCode: 2 });
      }
      if (assignments.length === 0 && options.expires === undefined && options.expiry) {
        command.error(
          "error: nothing to change: give --application, --instance, --unassign, --expires or --no-expiry",
          { exitCode: 2 },
        );
      }
      const { client } = await context.connect();
      const team = await resolveTeam(client, options.team);
      const teamId = team.id;
      const tokenId = (await resolveProvisioningToken(client, team, token)).id;
      const updated = await client.provisioningTokens.update.mutate({
        teamId,
        tokenId,
        ...(options.application !== undefined && {
          application: (await resolveApplication(client, options.application, options.team)).id,
          instance: null,
        }),
        ...(options.instance !== undefined && {
          instance: (await resolveInstance(client, options.instance, options.team)).id,
          application: null,
        }),
        ...(options.unassign && { application: null, instance: null }),
        ...(options.expires !== undefined && { expiresAt: options.expires }),
        ...(!options.expiry && { expiresAt: null }),
      });
      context.print(
        options.json
          ? json(updated)
          : `Provisioning token ${updated.name} (id ${updated.id}) assigns to ${assigned(updated)}, ` +
              `${updated.expiresAt ? `expires ${when(updated.expiresAt)}` : "never expires"}.\n`,
      );
    },
  );

  withJson(
    withYes(
      tokenCommand(provisioning, "delete", [
        {
          does: "Revoke a token (asks first); the devices it created stay",
          run: "devices provisioning delete line-a --team night",
        },
        { does: "From a script", run: "devices provisioning delete line-a --team night --yes" },
      ])
        .description(
          "Revoke a provisioning token (owners), asking first: it creates no device from now on",
        )
        .argument("<token>", "the token's id or name"),
      "revoke it",
    ),
  ).action(async (token: string, options: Options & { yes?: boolean }, command: Command) => {
    refuseUnanswerable(context, command, options.yes, "revoke");
    const { client } = await context.connect();
    const team = await resolveTeam(client, options.team);
    const found = await resolveProvisioningToken(client, team, token);
    if (!options.yes) {
      await confirmOrStop(
        context,
        `Revoke provisioning token ${found.name} (id ${found.id})?`,
        `${found.name} was not revoked`,
      );
    }
    const result = await client.provisioningTokens.delete.mutate({
      teamId: team.id,
      tokenId: found.id,
    });
    context.print(
      options.json ? json(result) : `Revoked provisioning token ${found.name} (id ${found.id}).\n`,
    );
  });
}
