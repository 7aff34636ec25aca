// `flowplane pipelines`: an application's delivery pipelines, their stages (each a hosted instance,
// in order), and deploying a stage to the next one — with `--wait`, until the deploy is done. A
// pipeline, an application or an instance is named by id or name in --team or else in all the
// caller's teams; a stage by id or name in its pipeline; a snapshot by id or name (resolve/).
// The stages' commands are in pipeline-stages.ts, the deploy in pipeline-deploy.ts.
import type { Pipeline, PipelineStage } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../context";
import { type Column, fields, json, table } from "../output";
import { withExamples } from "./examples";
import { teamCommand, withJson, withTeamToLookIn, withYes } from "./options";
import { resolveApplication, resolvePipeline, resolveTeam } from "../resolve";
import { addPipelineDeployCommand } from "./pipeline-deploy";
import { addPipelineStagesCommands } from "./pipeline-stages";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

const stageInstance = (stage: PipelineStage) => stage.instances[0]?.name ?? "(none)";

const PIPELINE_COLUMNS: Column<Pipeline>[] = [
  { header: "ID", value: (pipeline) => pipeline.id },
  { header: "NAME", value: (pipeline) => pipeline.name },
  { header: "APPLICATION", value: (pipeline) => pipeline.application?.name ?? "" },
  {
    header: "STAGES",
    value: (pipeline) => pipeline.stages.map((stage) => stage.name).join(" → ") || "(none)",
  },
];

const STAGE_COLUMNS: Column<PipelineStage>[] = [
  { header: "ID", value: (stage) => stage.id },
  { header: "NAME", value: (stage) => stage.name },
  { header: "INSTANCE", value: stageInstance },
  { header: "ACTION", value: (stage) => stage.action },
  { header: "NEXT", value: (stage) => stage.NextStageId ?? "(last)" },
];

interface Options {
  team?: string;
  json?: boolean;
}

export function addPipelinesCommands(program: Command, context: Context): void {
  const pipelines = program
    .command("pipelines")
    .description("Delivery pipelines: stages of an application's instances, and deploying them");
  teamCommand(
    pipelines,
    "list",
    [{ does: "The team's pipelines and their stages", run: "pipelines list --team night" }],
    (command) =>
      command
        .description("The team's pipelines, or one application's (viewers and up)")
        .option("--application <application>", "only this application's (id or name)"),
  ).action(async (options: Options & { application?: string }) => {
    const { client } = await context.connect();
    const list = options.application
      ? await client.pipelines.ofApplication.query({
          applicationId: (await resolveApplication(client, options.application, options.team)).id,
        })
      : await client.pipelines.ofTeam.query({
          teamId: (await resolveTeam(client, options.team!)).id,
        });
    context.print(
      options.json
        ? json(list)
        : list.count === 0
          ? "No pipelines.\n"
          : table(list.pipelines, PIPELINE_COLUMNS),
    );
  });

  teamCommand(
    pipelines,
    "show",
    [{ does: "A pipeline's stages in order", run: "pipelines show P1a2b3c4d5e6" }],
    (command) =>
      command
        .description("A pipeline and its stages in order (viewers and up)")
        .argument("<pipeline>", "the pipeline's id or name"),
    { lookIn: "the team" },
  ).action(async (given: string, options: Options) => {
    const { client } = await context.connect();
    const { id: pipelineId } = await resolvePipeline(client, given, options.team);
    const pipeline = await client.pipelines.get.query({ pipelineId });
    if (options.json) return context.print(json(pipeline));
    context.print(
      fields([
        ["Pipeline", `${pipeline.name} (${pipeline.id})`],
        ["Application", pipeline.application?.name ?? ""],
      ]) + (pipeline.stages.length === 0 ? "No stages.\n" : table(pipeline.stages, STAGE_COLUMNS)),
    );
  });

  teamCommand(
    pipelines,
    "create",
    [
      {
        does: "A pipeline in an application",
        run: "pipelines create Release --application A1b2c3d4e5f6",
      },
    ],
    (command) =>
      command
        .description("Create a pipeline in an application (owners)")
        .argument("<name>", "its name")
        .requiredOption(
          "--application <application>",
          "the application whose instances it deploys (id or name)",
        ),
    { lookIn: "the team" },
  ).action(async (name: string, options: Options & { application: string }) => {
    const { client } = await context.connect();
    const created = await client.pipelines.create.mutate({
      applicationId: (await resolveApplication(client, options.application, options.team)).id,
      name,
    });
    context.print(
      options.json ? json(created) : `Created pipeline ${created.name} (${created.id}).\n`,
    );
  });

  teamCommand(
    pipelines,
    "rename",
    [{ does: "Rename a pipeline", run: "pipelines rename P1a2b3c4d5e6 Ship" }],
    (command) =>
      command
        .description("Rename a pipeline (owners)")
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<name>", "its new name"),
    { lookIn: "the team" },
  ).action(async (given: string, name: string, options: Options) => {
    const { client } = await context.connect();
    const found = await resolvePipeline(client, given, options.team);
    const renamed = await client.pipelines.update.mutate({
      pipelineId: found.id,
      pipeline: { name },
    });
    context.print(
      options.json
        ? json(renamed)
        : `Renamed pipeline ${found.name} (id ${found.id}) to ${renamed.name}.\n`,
    );
  });

  withJson(
    withYes(
      withTeamToLookIn(
        withExamples(pipelines.command("delete"), [
          {
            does: "Delete a pipeline and its stages, from a script",
            run: "pipelines delete P1a2b3c4d5e6 --yes",
          },
        ])
          .description(
            "Delete a pipeline and its stages (owners); its instances and snapshots stay. Asked at the terminal first; without one, only with --yes.",
          )
          .argument("<pipeline>", "the pipeline's id or name"),
        "the team",
      ),
      "delete",
    ),
  ).action(async (given: string, options: Options & { yes?: boolean }, command: Command) => {
    refuseUnanswerable(context, command, options.yes);
    const { client } = await context.connect();
    const found = await resolvePipeline(client, given, options.team);
    const named = `pipeline ${found.name} (id ${found.id})`;
    if (!options.yes) {
      await confirmOrStop(
        context,
        `Delete ${named} and its stages?`,
        `${found.name} was not deleted`,
      );
    }
    const result = await client.pipelines.delete.mutate({ pipelineId: found.id });
    context.print(options.json ? json(result) : `Deleted ${named}.\n`);
  });

  addPipelineStagesCommands(pipelines, context);
  addPipelineDeployCommand(pipelines, context);
}
