// The team's devices (GET /teams/:teamId/devices): each with its state, when it was last seen, the
// snapshot it runs and what owns it (an application, its device group, or a hosted instance),
// filtered by application or device group (a GET form), a page at a time. Its owners move or
// delete the devices they check (devices-bulk.ts). The page's script (devices-list.js) fetches
// the page again every few seconds and puts the new rows in, so states follow without a reload.
import type { Device } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import type { FormError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { deviceGroupsRouter } from "../groups";
import { deviceListProcedures } from "../lists";
import { bulkRoutes, type BulkOutcome } from "./devices-bulk";

// The same procedures under the same names as the API's router (rate limits count by them).
export const devicesListProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  devices: router({ ...deviceListProcedures }),
  deviceGroups: deviceGroupsRouter,
});

export type ListCaller = ReturnType<typeof devicesListProcedures.createCaller>;

export const listCallerOf = (deps: PageDeps, request: FastifyRequest): ListCaller =>
  devicesListProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  moved: "The devices are moved.",
  deleted: "The devices are deleted.",
  registered: "The device is registered.",
  "device-deleted": "The device is deleted.",
};

/** Devices on one page of the list. */
const PAGE_SIZE = 50;

export type TeamParams = { teamId: string };
type Query = { application?: string; group?: string; cursor?: string };

export const devicesPath = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/devices`;

/** Who owns a device, as the list says it. */
function ownerOf(device: Device) {
  if (device.instance) return { kind: "Instance", name: device.instance.name };
  if (device.application) {
    return {
      kind: "Application",
      name: device.application.name,
      group: device.deviceGroup?.name,
    };
  }
  return undefined;
}

/** Where the page may be asked for: the filters as given, blank ones left out. */
function filtersOf(query: Query) {
  const value = (text: unknown) => (typeof text === "string" && text !== "" ? text : undefined);
  return {
    application: value(query.application),
    group: value(query.group),
    cursor: value(query.cursor),
  };
}

export interface ListState {
  bulk?: BulkOutcome;
  bulkError?: FormError;
}

/** The page: the devices as the filters choose them, and what the caller's role may do. */
export async function renderDevices(
  deps: PageDeps,
  request: FastifyRequest<{ Params: TeamParams; Querystring: Query }>,
  reply: FastifyReply,
  state: ListState = {},
  status = 200,
) {
  const caller = listCallerOf(deps, request);
  const { teamId } = request.params;
  const place = await teamPlace(caller.team, teamId);
  const filters = filtersOf(request.query ?? {});
  const seeGroups = place.can("team:device-group:list");
  const [applications, groups] = await Promise.all([
    caller.applications.ofTeam({ teamId }),
    seeGroups ? caller.deviceGroups.ofTeam({ teamId, limit: 100 }) : undefined,
  ]);
  const groupList = groups?.groups ?? [];
  let devices: Device[];
  let next: string | undefined;
  let count: number;
  if (filters.group) {
    const group = groupList.find((one) => one.id === filters.group);
    if (!group) throw notFound("No such device group in the team");
    const found = await caller.deviceGroups.byId({
      applicationId: group.application.id,
      groupId: group.id,
    });
    devices = found.devices;
    count = devices.length;
  } else {
    const query = { limit: PAGE_SIZE, ...(filters.cursor && { cursor: filters.cursor }) };
    if (filters.application && !applications.applications.some((a) => a.id === filters.application))
      throw notFound("No such application in the team");
    const page = filters.application
      ? await caller.devices.ofApplication({ applicationId: filters.application, ...query })
      : await caller.devices.ofTeam({ teamId, ...query });
    devices = page.devices;
    next = page.meta.next_cursor ?? undefined;
    count = page.count;
  }
  const nextQuery = next
    ? new URLSearchParams({
        ...(filters.application && { application: filters.application }),
        cursor: next,
      }).toString()
    : undefined;
  const shown = new URLSearchParams(
    Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
  return sendPage(
    deps,
    request,
    reply,
    "devices/pages/devices",
    {
      title: `Devices · ${place.team.name}`,
      place,
      devices: devices.map((device) => ({ ...device, owner: ownerOf(device) })),
      count,
      filters,
      pageUrl: `${devicesPath(teamId)}${shown ? `?${shown}` : ""}`,
      filtered: Boolean(filters.application || filters.group),
      nextQuery,
      applications: applications.applications,
      groups: groupList,
      seeGroups,
      bulk: state.bulk,
      bulkError: state.bulkError,
      notice: state.bulk || state.bulkError ? undefined : noticeOf(request, NOTICES),
      script: "devices-list.js",
    },
    status,
  );
}

export function devicesPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  app.get<{ Params: TeamParams; Querystring: Query }>(
    "/teams/:teamId/devices",
    route,
    (request, reply) => renderDevices(deps, request, reply),
  );
  bulkRoutes(app, deps, route, (request, reply, state, status) =>
    renderDevices(
      deps,
      request as FastifyRequest<{ Params: TeamParams; Querystring: Query }>,
      reply,
      state,
      status,
    ),
  );
}
