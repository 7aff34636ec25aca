// Snapshots of devices (FlowFuse's /devices/{id}/snapshots and /devices/{id}/snapshot): what a
// device runs. A device connected on the channel reports it (device-upload.ts: its flows,
// credentials and modules, a change made in its editor included). One that talks HTTP only uploads
// nothing: what it runs is what the platform gave it, which its check-in names (snapshot id and
// settings hash) — the snapshot's flows, credentials, Node-RED settings and modules (Node-RED at
// the version it reports) with the variables it runs with (its group's and its own over the
// snapshot's).
// An application's device owns its snapshots; an instance's device's snapshot is the instance's.
import {
  CreateDeviceSnapshotInput,
  DeviceSnapshotIdInput,
  ListDeviceSnapshotsInput,
  Snapshot,
  SnapshotList,
  Status,
} from "@flowplane/contract";
import {
  type Db,
  type DeviceDetail,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  type SnapshotSummaryRow,
  updateDevice,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import { DEFAULT_DEVICE_NODE_RED, deviceEnv, deviceOf } from "../devices/index";
import { contentOf, type SnapshotContent } from "./content";
import { contentUploadedBy } from "./device-upload";
import { recordDeviceSnapshotEvent } from "./events";
import {
  insertContent,
  remove,
  setInstanceDeviceTarget,
  snapshotPage,
  takeSnapshot,
  TAG,
} from "./records";
import { snapshotView } from "./views";

const invalidDevice = (message: string) =>
  new ApiError(400, "invalid_device", message, [{ path: "deviceId", message }]);

/** The device cannot say what it runs (yet): 400 `invalid_state`, saying why. */
const notRunning = (message: string) =>
  new ApiError(400, "invalid_state", message, [{ path: "deviceId", message }]);

/**
 * What the device runs, as a snapshot keeps it: the snapshot its last check-in named (one of its
 * team's, still on the platform), with the variables of the settings hash it reported, which must
 * be the ones it is given now (a device that has not caught up yet runs older ones, which the
 * platform no longer has).
 */
export async function contentOfDevice(
  db: Db,
  platformSecret: string,
  device: DeviceDetail,
): Promise<SnapshotContent> {
  const active =
    device.active_snapshot_id === null
      ? undefined
      : await findSnapshot(db, device.active_snapshot_id);
  if (!active || active.team_id !== device.team_id) {
    throw notRunning(
      "The device reports no snapshot it runs: set its target and wait until it runs it",
    );
  }
  if (device.active_settings_hash !== device.settings_hash) {
    throw notRunning(
      "The device does not run its current settings yet: try again after its next check-in",
    );
  }
  const content = contentOf(platformSecret, active);
  const own = deviceEnv(device);
  const names = new Set(own.map((v) => v.name));
  const env = [...content.settings.env.filter((v) => !names.has(v.name)), ...own];
  const hidden = Object.fromEntries(
    Object.entries(content.secrets.env).filter(([name]) => !names.has(name)),
  );
  for (const v of own.filter((v) => v.hidden)) hidden[v.name] = v.value;
  return {
    flows: content.flows,
    settings: {
      settings: content.settings.settings,
      env: env.map((v) => ({ name: v.name, value: v.hidden ? "" : v.value, hidden: v.hidden })),
      modules: {
        ...content.settings.modules,
        // The version it reports running; else what it was given (live.ts: the default).
        "node-red":
          device.node_red_version ??
          content.settings.modules["node-red"] ??
          DEFAULT_DEVICE_NODE_RED,
      },
    },
    secrets: { credentials: content.secrets.credentials, env: hidden },
  };
}

/**
 * What the device runs now: its own report when it is connected on the channel (a change made in
 * its editor included), else what the platform gave it and it last reported running.
 */
async function contentNow(
  ctx: Pick<Context, "db" | "tokenSecret" | "deviceChannel">,
  device: DeviceDetail,
): Promise<SnapshotContent> {
  const recorded = () => contentOfDevice(ctx.db, ctx.tokenSecret, device);
  const known = () =>
    recorded().catch((error: unknown) => {
      if (error instanceof ApiError && error.apiCode === "invalid_state") return undefined;
      throw error;
    });
  return (await contentUploadedBy(ctx, device, known)) ?? recorded();
}

/** Stores a snapshot of what the device runs, for its owner: the device, or its instance. */
export async function storeDeviceSnapshot(
  ctx: Pick<Context, "db" | "tokenSecret" | "auth">,
  trx: Db,
  device: DeviceDetail,
  content: SnapshotContent,
  meta: { name: string; description?: string; event: "created" | "imported" },
) {
  const owner =
    device.project_id !== null
      ? { type: "instance" as const, projectId: device.project_id }
      : { type: "device" as const, deviceId: device.id };
  const applicationId = device.project_application_id ?? device.application_id;
  if (applicationId === null) throw invalidDevice("The device is not assigned");
  const row = await insertContent(
    ctx,
    trx,
    { teamId: device.team_id, applicationId, owner },
    content,
    meta,
  );
  const teamId = device.team_id;
  await recordDeviceSnapshotEvent(
    trx,
    owner.type === "instance"
      ? "project.device.snapshot.created"
      : `application.device.snapshot.${meta.event}`,
    actorOf(ctx),
    owner.type === "instance"
      ? { type: "project", id: owner.projectId, name: device.project_name, team_id: teamId }
      : { type: "application", id: applicationId, name: device.application_name, team_id: teamId },
    device,
    { id: row.id, name: row.name },
  );
  return row;
}

/** The device, when it belongs to an application (its snapshots are its own then). */
export async function applicationDeviceOf(db: Db, deviceId: string): Promise<DeviceDetail> {
  const device = await deviceOf(db, deviceId);
  if (device.application_id === null) {
    throw invalidDevice(
      device.project_id !== null
        ? "The device belongs to an instance: its snapshots are the instance's (POST /devices/{deviceId}/snapshot)"
        : "The device is not assigned to an application",
    );
  }
  return device;
}

/** What a snapshot taken of a device now is stored with. */
const created = (input: { name: string; description?: string }) => ({
  name: input.name,
  description: input.description,
  event: "created" as const,
});

/** The snapshot, when it is the device's own (another's is as missing as an unknown one). */
async function deviceSnapshotOf(
  ctx: Pick<Context, "db">,
  deviceId: string,
  snapshotId: string,
): Promise<SnapshotSummaryRow> {
  const row = await findSnapshotSummary(ctx.db, snapshotId);
  if (!row || row.device_id !== deviceId) throw notFound();
  return row;
}

/** The procedures under /devices/{deviceId}/snapshot(s). */
export const deviceSnapshotProcedures = {
  ofDevice: procedure
    .meta({
      permission: "device:snapshot:list",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/snapshots",
        tags: [TAG],
        summary: "An application's device's snapshots, newest first (viewers and up)",
        description:
          "Paged with `limit` and `cursor` (`meta.next_cursor`). A device of an instance has none of its own (400 `invalid_device`): its snapshots are the instance's.",
      },
    })
    .input(ListDeviceSnapshotsInput)
    .output(SnapshotList)
    .query(async ({ ctx, input }) => {
      const device = await applicationDeviceOf(ctx.db, input.deviceId);
      return snapshotPage(ctx, { deviceId: device.id }, input);
    }),

  createOfDevice: procedure
    .meta({
      create: "replay",
      permission: "device:snapshot:create",
      openapi: {
        method: "POST",
        path: "/api/v1/devices/{deviceId}/snapshots",
        tags: [TAG],
        summary: "Take a snapshot of what an application's device runs (members and owners)",
        description:
          "Keeps what the device runs. A device connected to the platform's broker is asked (the agent's `upload`): its flows, credentials and modules as it reports them, a change made in its editor included; a device that does not answer is 400 `no_response`. Otherwise (a device that talks HTTP only uploads nothing) it is what the device last reported running: the flows, credentials, Node-RED settings and modules of the snapshot its check-in names (`node-red` at the version it reports). The variables are the ones it runs with (its device group's and its own over the snapshot's; hidden ones stay hidden; for a device reporting flows of no snapshot of the platform, an instance's device gets the instance's, an application's none). A device not connected that reports no snapshot of its team, or has not yet picked up its current settings, is 400 `invalid_state`; a device that is not an application's, 400 `invalid_device`. `setAsTarget` also makes it the device's target.",
      },
    })
    .input(CreateDeviceSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const device = await applicationDeviceOf(ctx.db, input.deviceId);
      const content = await contentNow(ctx, device);
      return takeSnapshot(
        ctx,
        input.setAsTarget,
        (trx) => storeDeviceSnapshot(ctx, trx, device, content, created(input)),
        async (trx, stored) => {
          await updateDevice(trx, device.id, { targetSnapshotId: stored.id });
          await recordDeviceSnapshotEvent(
            trx,
            "application.device.snapshot.device-target-set",
            actorOf(ctx),
            {
              type: "application",
              id: stored.application_id,
              name: device.application_name,
              team_id: device.team_id,
            },
            device,
            stored,
          );
        },
      );
    }),

  ofDeviceById: procedure
    .meta({
      permission: "device:snapshot:read",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "One of a device's snapshots (viewers and up)",
      },
    })
    .input(DeviceSnapshotIdInput)
    .output(Snapshot)
    .query(async ({ ctx, input }) =>
      // A snapshot not of this device is as missing as an unknown one, whatever the device is.
      snapshotView(await deviceSnapshotOf(ctx, input.deviceId, input.snapshotId), ctx.baseUrl),
    ),

  deleteOfDevice: procedure
    .meta({
      permission: "device:snapshot:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/devices/{deviceId}/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "Delete one of a device's snapshots (owners)",
        description:
          "A device whose target it was has none any more: at its next check-in it is told to run nothing, and stops its Node-RED.",
      },
    })
    .input(DeviceSnapshotIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await remove(ctx, await deviceSnapshotOf(ctx, input.deviceId, input.snapshotId));
      return { status: "okay" as const };
    }),

  ofInstanceDevice: procedure
    .meta({
      create: "replay",
      permission: "project:snapshot:create",
      openapi: {
        method: "POST",
        path: "/api/v1/devices/{deviceId}/snapshot",
        tags: [TAG],
        summary:
          "Take a snapshot of what an instance's device runs, for the instance (members and owners)",
        description:
          "As `POST /devices/{deviceId}/snapshots`, for a device of a hosted instance: the snapshot is the instance's (`ownerType` `instance`). `setAsTarget` also makes it the snapshot the instance's devices run. A device that is not an instance's is 400 `invalid_device`.",
      },
    })
    .input(CreateDeviceSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const device = await deviceOf(ctx.db, input.deviceId);
      if (device.project_id === null) {
        throw invalidDevice(
          device.application_id !== null
            ? "The device belongs to an application: its snapshots are its own (POST /devices/{deviceId}/snapshots)"
            : "The device is not assigned to an instance",
        );
      }
      const project = await findProject(ctx.db, device.project_id);
      if (!project) throw notFound();
      const content = await contentNow(ctx, device);
      return takeSnapshot(
        ctx,
        input.setAsTarget,
        (trx) => storeDeviceSnapshot(ctx, trx, device, content, created(input)),
        (trx, stored) => setInstanceDeviceTarget(ctx, trx, project, stored),
      );
    }),
};
