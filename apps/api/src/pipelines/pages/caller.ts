// What the pipeline pages share: their tRPC caller (the API's own procedures under the names of
// the API's router), the team's pipeline read through it, and what a stage may deploy to.
import type { FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import { deviceGroupsRouter, deviceListProcedures } from "../../devices/index";
import type { PageDeps } from "../../pages/page";
import { teamRouter } from "../../teams/index";
import { deployProcedures } from "../deploy";
import { pipelineProcedures } from "../procedures";
import { stageProcedures } from "../stages";

// The same procedures under the same names as the API's router (rate limits count by them).
const pipelinePageProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  deviceGroups: deviceGroupsRouter,
  devices: router(deviceListProcedures),
  pipelines: router({ ...pipelineProcedures, ...stageProcedures, ...deployProcedures }),
});

export const pipelineCallerOf = (deps: PageDeps, request: FastifyRequest) =>
  pipelinePageProcedures.createCaller(deps.context(request));
export type PipelineCaller = ReturnType<typeof pipelineCallerOf>;

export const pipelinesPath = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/pipelines`;

/** The team's pipeline of that id, with its application (another team's is this page's 404). */
export async function pipelineOfTeam(caller: PipelineCaller, teamId: string, pipelineId: string) {
  const { pipelines } = await caller.pipelines.ofTeam({ teamId });
  const pipeline = pipelines.find((one) => one.id === pipelineId);
  if (!pipeline) throw notFound();
  return pipeline as typeof pipeline & { application: { id: string; name: string } };
}

/** A stage's target as the stage forms send it: `instance:<id>`, `group:<id>` or `device:<id>`. */
export function targetInput(value: string | undefined) {
  const [kind, id] = (value ?? "").split(":", 2);
  if (!id) return {};
  if (kind === "instance") return { instanceId: id };
  if (kind === "group") return { deviceGroupId: id };
  if (kind === "device") return { deviceId: id };
  return {};
}

/** What the stages of an application's pipeline may deploy to (for its owners' forms). */
export async function targetsOf(caller: PipelineCaller, teamId: string, applicationId: string) {
  const [{ applications }, groups, devices] = await Promise.all([
    caller.applications.ofTeam({ teamId }),
    caller.deviceGroups.list({ applicationId, limit: 100 }),
    caller.devices.ofApplication({ applicationId, limit: 100 }),
  ]);
  const application = applications.find((one) => one.id === applicationId);
  return {
    instances: (application?.instances ?? []).map((one) => ({ id: one.id, name: one.name })),
    groups: groups.groups.map((one) => ({ id: one.id, name: one.name })),
    devices: devices.devices.map((one) => ({ id: one.id, name: one.name })),
  };
}
