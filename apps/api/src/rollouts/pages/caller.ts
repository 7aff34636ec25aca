// What the rollout pages share: their tRPC caller (the API's own procedures under the names of the
// API's router), a rollout or a group read as the team's, the form that starts one as posted (its
// waves parsed from text), and where the pages are.
import { type RolloutWaveSpec, wavesOfText } from "@flowplane/contract";
import type { FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { invalidRequest, notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import { deviceGroupsRouter } from "../../devices/index";
import { field } from "../../pages/forms";
import type { PageDeps } from "../../pages/page";
import { snapshotsRouter } from "../../snapshots/index";
import { teamRouter } from "../../teams/index";
import { rolloutProcedures } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const rolloutPageProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  deviceGroups: deviceGroupsRouter,
  snapshots: snapshotsRouter,
  rollouts: router(rolloutProcedures),
});

export const rolloutCallerOf = (deps: PageDeps, request: FastifyRequest) =>
  rolloutPageProcedures.createCaller(deps.context(request));
export type RolloutCaller = ReturnType<typeof rolloutCallerOf>;

const team = (teamId: string) => `/teams/${encodeURIComponent(teamId)}`;
export const rolloutPath = (teamId: string, rolloutId: string) =>
  `${team(teamId)}/rollouts/${encodeURIComponent(rolloutId)}`;
export const groupRolloutsPath = (teamId: string, groupId: string) =>
  `${team(teamId)}/device-groups/${encodeURIComponent(groupId)}/rollouts`;
export const applicationRolloutsPath = (teamId: string, applicationId: string) =>
  `${team(teamId)}/applications/${encodeURIComponent(applicationId)}/rollouts`;

/** The team's application of that id (another team's, or none, is this page's 404). */
export async function applicationOfTeam(
  caller: RolloutCaller,
  teamId: string,
  applicationId: string,
) {
  const { applications } = await caller.applications.ofTeam({ teamId });
  const application = applications.find((one) => one.id === applicationId);
  if (!application) throw notFound();
  return { id: application.id, name: application.name };
}

/** The team's device group of that id, with its application (else this page's 404). */
export async function groupOfTeam(caller: RolloutCaller, teamId: string, groupId: string) {
  let cursor: string | undefined;
  do {
    const page = await caller.deviceGroups.ofTeam({ teamId, limit: 100, cursor });
    const group = page.groups.find((one) => one.id === groupId);
    if (group) return group;
    cursor = page.meta.next_cursor;
  } while (cursor);
  throw notFound();
}

/** The team's rollout of that id (another team's is this page's 404). */
export async function rolloutOfTeam(caller: RolloutCaller, teamId: string, rolloutId: string) {
  const rollout = await caller.rollouts.byId({ rolloutId });
  await applicationOfTeam(caller, teamId, rollout.application.id);
  return rollout;
}

/**
 * Waves as typed (`1,50%,100%`): a whole number is a count of devices, `N%` a share of them. Bad
 * text is a 400 naming the field, as the API's own errors are.
 */
export function parseWaves(text: string): RolloutWaveSpec[] {
  const bad = (message: string) => invalidRequest(message, [{ path: "waves", message }]);
  if (text.trim() === "") throw bad("Give at least one wave, e.g. 1,50%,100%");
  const parsed = wavesOfText(text);
  if ("waves" in parsed) return parsed.waves;
  const { index, part } = parsed.bad;
  throw bad(
    `Wave ${index + 1} (“${part}”) is neither a number of devices nor a percentage (e.g. 50%)`,
  );
}

/** The form that starts a rollout, as posted (text, to show again when it fails). */
export function rolloutFormOf(body: unknown) {
  return {
    snapshotId: field(body, "snapshotId") ?? "",
    waves: field(body, "waves") ?? "",
    soakSeconds: field(body, "soakSeconds") ?? "",
    maxFailures: field(body, "maxFailures") ?? "",
    requireApproval: field(body, "requireApproval") === "yes",
  };
}
export type RolloutForm = ReturnType<typeof rolloutFormOf>;

/** A number field: blank is the API's default; anything else is sent as typed, for it to judge. */
const numberOf = (text: string) => (text.trim() === "" ? undefined : Number(text.trim()));

/** The API's input for the form (waves parsed here; the rest judged by the API). */
export function createInputOf(form: RolloutForm, deviceGroupId: string, dryRun: boolean) {
  const soakSeconds = numberOf(form.soakSeconds);
  const maxFailures = numberOf(form.maxFailures);
  return {
    snapshotId: form.snapshotId,
    deviceGroupId,
    waves: parseWaves(form.waves),
    ...(soakSeconds !== undefined && { soakSeconds }),
    ...(maxFailures !== undefined && { maxFailures }),
    requireApproval: form.requireApproval,
    dryRun,
  };
}
