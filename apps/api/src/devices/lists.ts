// The team's, an application's, an instance's and (administrators) the platform's devices:
// paged, sorted and searched lists.
import {
  ApplicationDevicesInput,
  DeviceList,
  type DeviceListQuery,
  InstanceDevicesInput,
  PlatformDevicesInput,
  TeamDevicesInput,
} from "@flowplane/contract";
import { listDevices } from "@flowplane/db";
import { type Context, procedure } from "../core/trpc";
import { deviceView } from "./views";
import { TAG } from "./procedures";

function listQuery(input: DeviceListQuery) {
  return {
    limit: input.limit,
    cursor: input.cursor,
    query: input.query,
    sort: input.sort,
    dir: input.dir ?? input.order,
  };
}

function deviceListView(
  page: Awaited<ReturnType<typeof listDevices>>,
  ctx: Pick<Context, "baseUrl">,
) {
  const now = Date.now();
  return {
    meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
    count: page.total,
    devices: page.rows.map((row) => deviceView(row, ctx.baseUrl, now)),
  };
}

const LIST_DESCRIPTION =
  "A page of devices (at most 100, as FlowFuse), ordered by `sort` (`name` by default; `lastSeenAt`, `state`, `type`, `createdAt`) in `dir` order, ties by id; `meta.next_cursor` is the next page's `cursor` (present when there are more), `count` every match. `query` matches the name or type in any case. FlowFuse's `page` (offset) paging, `filters` and `statusOnly` are not offered.";

/** GET /teams/{teamId}/devices, /applications/{applicationId}/devices,
 * /projects/{instanceId}/devices and /devices. */
export const deviceListProcedures = {
  ofTeam: procedure
    .meta({
      permission: "team:device:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/devices",
        tags: [TAG],
        summary: "The team's devices",
        description: LIST_DESCRIPTION,
      },
    })
    .input(TeamDevicesInput)
    .output(DeviceList)
    .query(async ({ ctx, input }) =>
      deviceListView(await listDevices(ctx.db, { teamId: input.teamId }, listQuery(input)), ctx),
    ),

  ofApplication: procedure
    .meta({
      permission: "team:device:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/devices",
        tags: [TAG],
        summary: "The devices assigned to an application",
        description: LIST_DESCRIPTION,
      },
    })
    .input(ApplicationDevicesInput)
    .output(DeviceList)
    .query(async ({ ctx, input }) =>
      deviceListView(
        await listDevices(ctx.db, { applicationId: input.applicationId }, listQuery(input)),
        ctx,
      ),
    ),

  ofInstance: procedure
    .meta({
      permission: "project:read",
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/devices",
        tags: [TAG],
        summary: "The devices assigned to a hosted instance",
        description: `${LIST_DESCRIPTION} These devices run the instance's snapshots (its device target, \`/projects/{instanceId}/devices/settings\`).`,
      },
    })
    .input(InstanceDevicesInput)
    .output(DeviceList)
    .query(async ({ ctx, input }) =>
      deviceListView(
        await listDevices(ctx.db, { projectId: input.instanceId }, listQuery(input)),
        ctx,
      ),
    ),

  ofPlatform: procedure
    .meta({
      permission: "device:list",
      openapi: {
        method: "GET",
        path: "/api/v1/devices",
        tags: [TAG],
        summary: "Every device of the platform (administrators)",
        description: LIST_DESCRIPTION,
      },
    })
    .input(PlatformDevicesInput)
    .output(DeviceList)
    .query(async ({ ctx, input }) =>
      deviceListView(await listDevices(ctx.db, "platform", listQuery(input)), ctx),
    ),
};
