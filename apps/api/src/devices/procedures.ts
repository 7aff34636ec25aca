// Remote devices: created by a team's owners (or by a provisioning token of the team), read by
// viewers and up, renamed and assigned by owners, their target snapshot changed by members; new
// credentials. Their variables: device-settings.ts; the device's audit log: audit-log.ts; the
// team's and an application's lists: lists.ts.
import { actsAsAdmin } from "@flowplane/auth";
import {
  CreateDeviceInput,
  CreatedDevice,
  Device,
  DeviceCredentials,
  DeviceIdInput,
  Role,
  Status,
  UpdateDeviceInput,
} from "@flowplane/contract";
import {
  countTeamDevices,
  type Db,
  deleteDevice,
  type DeviceDetail,
  findDevice,
  findProject,
  findSnapshotSummary,
  insertDevice,
  lockTeam,
  setDeviceCredentials,
  teamLimits,
  updateDevice,
} from "@flowplane/db";
import { ApiError, forbidden, notFound, unauthorized } from "../core/errors";
import { actorOf, procedure, teamOf } from "../core/trpc";
import { checkIfMatch, setETag } from "../core/writes";
import { VERSION } from "../core/version";
import { applicationOfDevice, deviceView } from "./views";
import { settingsHash } from "./settings";
import { newCredentials, newOtc, setUpDevice, shownCredentials } from "./credentials";
import { recordCredentialsGenerated, recordDeviceEvent } from "./events";
import { invalidField, moveDevice, ownerOf } from "./moves";

export const TAG = "Devices";

export async function deviceOf(db: Db, deviceId: string): Promise<DeviceDetail> {
  const device = await findDevice(db, deviceId);
  if (!device) throw notFound();
  return device;
}

/** Creating, reading, changing and deleting devices, and their credentials (index.ts puts them in
 * one router with their settings, audit log and lists). */
export const deviceProcedures = {
  create: procedure
    .meta({
      create: "secret",
      permission: "device:create",
      provisioning: true,
      deviceSetup: true,
      bodyModes: [
        {
          description: "Create a device",
          fields: ["name", "type", "team", "application", "instance"],
          required: ["name", "team"],
        },
        {
          description:
            "The device agent's setup with its one-time code (the bearer: the base64 of the code)",
          fields: ["setup", "agentHost"],
          required: ["setup"],
        },
      ],
      openapi: {
        method: "POST",
        path: "/api/v1/devices",
        tags: [TAG],
        summary:
          "Create a device (owners, or a provisioning token of the team), or set one up with its one-time code",
        description:
          "The reply's `credentials` (the device's token and credential secret, and a one-time code) are shown once and never again: the token and secret go into the agent's `device.yml` with the device's `id` and the platform's URL as `forgeURL`; or, instead, the device is set up with the one-time code (below). `application` or `instance` assigns the device at once. With a provisioning token (`fpv_…`), `team` must be the token's team, and the device is assigned to the token's application or instance (the body's are ignored); its reply has no one-time code. When the platform has a broker, `credentials.broker` (`url`, `username`, `password`, shown once) puts the agent on its MQTT channel: changes reach it at once, and it reports its state as it changes; without one, the agent polls over HTTP. Past the team type's `devices` limit, 400 `device_limit_reached`.\n\nSetup (the agent's `--otc <code> --ff-url <url>`): the bearer is the base64 of the one-time code and the body `{ setup: true, agentHost }`. The reply is the device with new `credentials` (token and secret, no code): the device's old token stops working, and the code is used up, so of two setups with one code only the first succeeds. A used, expired (after 24 hours) or unknown code: 401. Failed codes are limited per client address (10 per 60 s) and from all addresses together (100 per 60 s): past either, a setup is 429 `too_many_requests` with Retry-After, its code unchecked (the right one too) and not used up.",
      },
    })
    .input(CreateDeviceInput)
    .output(CreatedDevice)
    .mutation(async ({ ctx, input }) => {
      if (input.setup) {
        const { deviceId, credentials } = await setUpDevice(ctx, input.agentHost);
        return {
          ...deviceView(await deviceOf(ctx.db, deviceId), ctx.baseUrl),
          credentials,
          meta: { ffVersion: VERSION },
        };
      }
      // A one-time code sets its device up, and creates nothing.
      if (ctx.auth.otc) throw unauthorized();
      const teamId = teamOf(ctx).team.id;
      const provisioning = ctx.auth.provisioning;
      const credentials = newCredentials(ctx.tokenSecret);
      // The device's one-time code: not for a provisioning token's device, which has its
      // credentials already (a code would only be one more way in).
      const otc = provisioning ? undefined : newOtc(ctx.tokenSecret);
      const id = await ctx.db.transaction().execute(async (trx) => {
        // The team row is the lock: two creations cannot both take the last place.
        if (!(await lockTeam(trx, teamId))) throw notFound();
        const owner = provisioning
          ? { applicationId: provisioning.applicationId, projectId: provisioning.projectId }
          : await ownerOf(trx, teamId, input);
        const limit = (await teamLimits(trx, teamId))?.devices?.limit ?? null;
        if (limit !== null && (await countTeamDevices(trx, teamId)) >= limit) {
          throw new ApiError(
            400,
            "device_limit_reached",
            `The team's type allows ${limit} device${limit === 1 ? "" : "s"}`,
          );
        }
        const row = await insertDevice(trx, {
          teamId,
          // The schema requires both unless it is a setup.
          name: input.name!,
          type: input.type ?? "",
          applicationId: owner.applicationId,
          projectId: owner.projectId,
          tokenDigest: credentials.tokenDigest,
          otc: otc?.kept ?? null,
          credentialSecret: credentials.credentialSecret,
          brokerPasswordDigest: credentials.brokerPasswordDigest,
          settingsHash: settingsHash([]),
        });
        await recordDeviceEvent(trx, "team.device.created", actorOf(ctx), row, {
          ...(provisioning && {
            provisioningToken: { id: provisioning.tokenId, name: provisioning.name },
          }),
        });
        return row.id;
      });
      return {
        ...deviceView(await deviceOf(ctx.db, id), ctx.baseUrl),
        credentials: {
          ...shownCredentials(ctx, { id, team_id: teamId }, credentials),
          ...(otc && { otc: otc.code }),
        },
        meta: { ffVersion: VERSION },
      };
    }),

  byId: procedure
    .meta({
      permission: "device:read",
      etag: true,
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}",
        tags: [TAG],
        summary: "A device",
        description:
          "`status` is the state the agent last reported; `onlineStatus` is `online` while the agent holds its MQTT session with the platform and `offline` once it has lost it (a closed connection at once, a silent one after 1.5 times its keepalive: 90 s for the agent's 60 s); for an agent that polls over HTTP, `online` when it checked in within 30 minutes and `offline` after that; `not-seen` before its first check-in.",
      },
    })
    .input(DeviceIdInput)
    .output(Device)
    .query(async ({ ctx, input }) => {
      const device = await deviceOf(ctx.db, input.deviceId);
      setETag(ctx, device.version);
      return deviceView(device, ctx.baseUrl);
    }),

  update: procedure
    .meta({
      permission: "device:snapshot:set-target",
      etag: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/devices/{deviceId}",
        tags: [TAG],
        summary: "Rename a device, assign it, or set its target snapshot",
        description:
          "Owners rename (`name`, `type`) and assign the device to an application or a hosted instance of its team (`application`, `instance`; null unassigns, which also clears its target snapshot). Members may send `targetSnapshot` alone: a snapshot of the device's application or instance (400 `invalid_snapshot` otherwise).",
      },
    })
    .input(UpdateDeviceInput)
    .output(Device)
    .mutation(async ({ ctx, input }) => {
      const { role } = teamOf(ctx);
      const { deviceId, targetSnapshot, ...owned } = input;
      if (Object.keys(owned).length > 0 && (role ?? 0) < Role.owner && !actsAsAdmin(ctx.auth)) {
        throw forbidden("Only owners may rename or assign a device; members set its target");
      }
      await ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "devices", deviceId);
        const before = await findDevice(trx, deviceId);
        if (!before) throw notFound();
        const assigning = input.application !== undefined || input.instance !== undefined;
        const owner = assigning
          ? await ownerOf(trx, before.team_id, {
              application: input.application,
              instance: input.instance,
            })
          : undefined;
        const actor = actorOf(ctx);
        // Another owner: its own target and group no longer apply (moves.ts).
        const ownerChanged = owner !== undefined && (await moveDevice(trx, actor, before, owner));
        if (targetSnapshot !== undefined && targetSnapshot !== null) {
          // Checked against the device as it will be (an assignment in the same request first).
          const applicationId = ownerChanged
            ? (owner.applicationId ??
              (owner.projectId && (await findProject(trx, owner.projectId))?.application_id) ??
              null)
            : applicationOfDevice(before);
          const snapshot = await findSnapshotSummary(trx, targetSnapshot);
          if (
            !snapshot ||
            snapshot.team_id !== before.team_id ||
            applicationId === null ||
            snapshot.application_id !== applicationId
          ) {
            throw invalidField(
              "targetSnapshot",
              "invalid_snapshot",
              "No such snapshot in the device's application",
            );
          }
        }
        await updateDevice(trx, deviceId, {
          name: input.name,
          type: input.type,
          ...(targetSnapshot !== undefined && { targetSnapshotId: targetSnapshot }),
        });
        const device = { id: deviceId, name: input.name ?? before.name, team_id: before.team_id };
        if (
          (input.name !== undefined && input.name !== before.name) ||
          (input.type !== undefined && input.type !== before.type)
        ) {
          await recordDeviceEvent(trx, "team.device.updated", actor, device, {
            ...(input.name !== undefined && { name: { old: before.name, new: input.name } }),
            ...(input.type !== undefined && { type: { old: before.type, new: input.type } }),
          });
        }
        if (targetSnapshot !== undefined && targetSnapshot !== before.target_snapshot_id) {
          await recordDeviceEvent(trx, "device.snapshot.target-set", actor, device, {
            snapshot: targetSnapshot && { id: targetSnapshot },
          });
        }
      });
      const device = await deviceOf(ctx.db, deviceId);
      setETag(ctx, device.version);
      return deviceView(device, ctx.baseUrl);
    }),

  delete: procedure
    .meta({
      permission: "device:delete",
      etag: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/devices/{deviceId}",
        tags: [TAG],
        summary: "Delete a device (owners)",
        description:
          "Its token stops working at once: the agent's next check-in is 401 (or 404), and the agent stops Node-RED and forgets what it ran; its MQTT session, if it holds one, ends at once.",
      },
    })
    .input(DeviceIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const device = await ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "devices", input.deviceId);
        const device = await deleteDevice(trx, input.deviceId);
        if (!device) throw notFound();
        await recordDeviceEvent(trx, "team.device.deleted", actorOf(ctx), device);
        return device;
      });
      // Its MQTT session ends now too, and its editor's tunnel, sockets and sessions.
      ctx.broker?.deviceChanged(device.team_id, device.id);
      ctx.deviceEditor?.end(device.id);
      return { status: "okay" as const };
    }),

  generateCredentials: procedure
    .meta({
      permission: "device:edit",
      openapi: {
        method: "POST",
        path: "/api/v1/devices/{deviceId}/generate_credentials",
        tags: [TAG],
        summary: "New credentials for a device (owners)",
        description:
          "A new token, credential secret and one-time code, shown once: the old token and code stop working at once (write the new token and secret into the agent's `device.yml`, or set the device up with the code).",
      },
    })
    .input(DeviceIdInput)
    .output(DeviceCredentials)
    .mutation(async ({ ctx, input }) => {
      const credentials = newCredentials(ctx.tokenSecret);
      const otc = newOtc(ctx.tokenSecret);
      const device = await ctx.db.transaction().execute(async (trx) => {
        const device = await setDeviceCredentials(trx, input.deviceId, {
          tokenDigest: credentials.tokenDigest,
          otc: otc.kept,
          credentialSecret: credentials.credentialSecret,
          brokerPasswordDigest: credentials.brokerPasswordDigest,
        });
        if (!device) throw notFound();
        await recordCredentialsGenerated(trx, actorOf(ctx), device);
        return device;
      });
      // The old credentials' MQTT session ends now.
      ctx.broker?.deviceChanged(device.team_id, device.id);
      return { ...shownCredentials(ctx, device, credentials), otc: otc.code };
    }),
};
