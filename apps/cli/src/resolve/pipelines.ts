// Pipelines and their stages as a command line names them (rule.ts): a pipeline by id or name in
// the team given or else in all the caller's teams; a stage in its pipeline.
import type { Pipeline } from "@flowplane/contract";
import type { Client } from "../client";
import { type Named, orNone, pick } from "./rule";
import { listTeams } from "./teams";

export type PipelineRef = Pipeline & Named;

/** The pipeline named by id or name, in the team given or else in all the caller's teams. */
export async function resolvePipeline(
  client: Client,
  given: string,
  team?: string,
): Promise<PipelineRef> {
  const { teams, scope } = await listTeams(client, team);
  const lists = await Promise.all(
    teams.map(async (t) =>
      (await client.pipelines.ofTeam.query({ teamId: t.id })).pipelines.map((p) => ({
        ...p,
        where: `in application ${p.application?.name ?? "?"} of team ${t.name}`,
      })),
    ),
  );
  return pick<PipelineRef>({
    kind: "pipeline",
    given,
    scope,
    candidates: lists.flat(),
    byId:
      team === undefined
        ? async (pipelineId) => {
            const found = await orNone(client.pipelines.get.query({ pipelineId }));
            return found && { ...found, where: "" };
          }
        : undefined,
  });
}

/** The stage named by id or name in the pipeline. */
export function resolveStage(
  pipeline: PipelineRef,
  given: string,
): Promise<PipelineRef["stages"][number] & Named> {
  return pick({
    kind: "stage",
    given,
    scope: `in pipeline ${pipeline.name}`,
    candidates: pipeline.stages.map((s, at) => ({
      ...s,
      where: `stage ${at + 1} of ${pipeline.stages.length}`,
    })),
  });
}
