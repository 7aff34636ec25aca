// What the device group pages share: their tRPC caller (the API's own procedures under the names
// of the API's router), the team's groups read through it, and where the pages are.
import type { FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { notFound } from "../../core/errors";
import { type Context, router } from "../../core/trpc";
import type { PageDeps } from "../../pages/page";
import { teamRouter } from "../../teams/index";
import { deviceGroupsRouter } from "../groups";
import { deviceListProcedures } from "../lists";

// The same procedures under the same names as the API's router (rate limits count by them).
const groupProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  deviceGroups: deviceGroupsRouter,
  devices: router(deviceListProcedures),
});

export const groupCallerOf = (deps: PageDeps, request: FastifyRequest) =>
  groupProcedures.createCaller(deps.context(request));
export type GroupCaller = ReturnType<typeof groupCallerOf>;

/**
 * An application's snapshots, newest first, as its group's target may be set to (the snapshots
 * area's own procedure: given by whoever registers these pages, as the devices area may not import
 * the snapshots area, which imports it).
 */
export type ApplicationSnapshots = (
  context: Context,
  applicationId: string,
) => Promise<{ id: string; name: string; createdAt: string }[]>;

export const groupsPath = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/device-groups`;

/** Every device group of the team, all pages of the API's list. */
export async function groupsOfTeam(caller: GroupCaller, teamId: string) {
  const groups = [];
  let cursor: string | undefined;
  do {
    const page = await caller.deviceGroups.ofTeam({ teamId, limit: 100, cursor });
    groups.push(...page.groups);
    cursor = page.meta.next_cursor;
  } while (cursor);
  return groups;
}

/** The team's group of that id (another team's, or none, is this page's 404). */
export async function groupOfTeam(caller: GroupCaller, teamId: string, groupId: string) {
  const group = (await groupsOfTeam(caller, teamId)).find((one) => one.id === groupId);
  if (!group) throw notFound();
  return group;
}
