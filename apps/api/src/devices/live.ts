// What the FlowFuse device agent calls (HTTP mode), as FlowFuse's deviceLive routes: its check-in
// (`POST /api/v1/devices/<id>/live/state`: 200 `{}` in step, else 409 naming what it should run),
// the snapshot and settings it then downloads, and the audit events it and its Node-RED post
// (`POST /logging/device/<id>/audit`). Every call needs the device's own token (`fpd_…`), which
// reaches these routes of this device and nothing else; no other token reaches them. The routes
// under /api/v1 are in the OpenAPI document (tag "Device agent", scheme `deviceToken`), each
// declared once with the schemas its handler uses (live-schemas.ts, core/route-docs.ts).
import {
  bearerToken,
  encryptCredentials,
  openSnapshotEnv,
  openSnapshotSecrets,
  parseToken,
  tokenDigest,
} from "@flowplane/auth";
import {
  announceDeviceOnline,
  announceDeviceSnapshot,
  checkInDevice,
  type Db,
  type DeviceDetail,
  failWatchedRolloutDevice,
  findDeviceByToken,
  findSnapshot,
  watchedRolloutDevice,
} from "@flowplane/db";
import { isId } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { toErrorResponse, unauthorized, unreadableSnapshot, validationError } from "../core/errors";
import { routeUrl } from "../core/route-docs";
import { recordDeviceCrashed, recordDeviceEvent } from "./events";
import { deviceEnv } from "./settings";
import { AuditBody, CHECK_IN, CheckInBody, SETTINGS, SNAPSHOT, STATE } from "./live-schemas";
import { withHealthTab } from "./health-tab";
import { mismatchOf, snapshotOf } from "./mismatch";

export interface DeviceLiveOptions {
  db: Db;
  tokenSecret: string;
  /** The platform's base URL, which a rollout's health tab reports to. */
  baseUrl: string;
  /** Told when the agent's report failed a device a rollout watches. */
  rolloutChanged?: () => void;
}

/** What the agent reports that fails a device a rollout watches. */
const FAILING_EVENTS = new Set<string>(["crashed", "start-failed", "safe-mode"]);

/** The agent's reports that are a crash (`device.crashed`), and the state each leaves it in. */
const CRASH_STATES: Partial<Record<string, "crashed" | "safe">> = {
  crashed: "crashed",
  "safe-mode": "safe",
};

/** Node-RED 5 needs Node 22.9; agents on Node 20 run 4.x: what a snapshot without one gets. */
export const DEFAULT_DEVICE_NODE_RED = "4.1.15";

export async function deviceLiveRoutes(app: FastifyInstance, opts: DeviceLiveOptions) {
  const { db } = opts;

  // Who calls is decided before the body is read, by this context's own onRequest hooks: a
  // request without a device token is refused at once (no I/O), and the routes that look their
  // device up (all but the check-in) do so before the body too (issue 32). The check-in, the hot
  // path, is authenticated by the one statement that records it; a body with a well-formed but
  // unknown token is read only up to the platform's global body limit.
  const digests = new WeakMap<FastifyRequest, string>();
  const devices = new WeakMap<FastifyRequest, DeviceDetail>();

  async function refuse(request: FastifyRequest, reply: FastifyReply) {
    const { status, body } = toErrorResponse(unauthorized(), request.id);
    return reply.code(status).send(body);
  }

  app.addHook("onRequest", async (request, reply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token || parseToken(token) !== "device") return refuse(request, reply);
    // No device has an id that is not one (a NUL would fail the statement): not this device's.
    const { deviceId } = request.params as { deviceId?: string };
    if (deviceId !== undefined && !isId(deviceId)) return refuse(request, reply);
    digests.set(request, tokenDigest(opts.tokenSecret, token));
  });

  /** The snapshot's flows, with a rollout's health tab when a rollout watches the device. */
  async function flowsFor(device: DeviceDetail, row: { id: string; flows: unknown[] }) {
    if (device.rollout_snapshot_id !== row.id) return row.flows;
    const watched = await watchedRolloutDevice(db, device.id);
    if (!watched || watched.snapshot_id !== row.id) return row.flows;
    return withHealthTab(row.flows, {
      ...opts,
      rolloutId: watched.rollout_id,
      deviceId: device.id,
    });
  }

  // The agent's own calls: not counted against people's limits.
  const config = { rateLimit: false as const };

  // The hot path: one statement records the check-in and reads the target.
  app.post(routeUrl(CHECK_IN), { config }, async (request, reply) => {
    const digest = digests.get(request)!;
    const parsed = CheckInBody.safeParse(request.body);
    if (!parsed.success) throw validationError(parsed.error);
    const body = parsed.data ?? {};
    const { deviceId } = request.params as { deviceId: string };
    const snapshot = snapshotOf(body.snapshot);
    const target = await checkInDevice(db, deviceId, digest, {
      // A null body is the agent updating (FlowFuse's reading).
      state: parsed.data === null ? "updating" : (body.state ?? null),
      agentVersion: body.agentVersion ?? null,
      nodeRedVersion: body.nodeRedVersion ?? null,
      nodejsVersion: body.nodejsVersion ?? null,
      snapshot,
      settings: body.settings ?? null,
    });
    // A wrong token, or a device deleted: the agent stops and forgets what it ran.
    if (!target) return refuse(request, reply);
    // What changed, announced once (events/platform.ts): checking in again after silence, and
    // another snapshot running (an agent busy updating reports none: not a change it runs).
    if (target.coming_online) await announceDeviceOnline(db, deviceId, true);
    if (target.snapshot_changed && parsed.data !== null) {
      await announceDeviceSnapshot(db, deviceId, snapshot);
    }
    const wanted = {
      project: target.project_id,
      application: target.application_id,
      snapshot: target.target,
      settings: target.settings_hash,
    };
    const error = mismatchOf(body, target);
    // Every key, every time: a key left out reads as a change, and the agent deploys again.
    // FlowFuse's body inside the platform's error envelope (`code`, `requestId`): the agent
    // takes the four keys and ignores the rest.
    if (error)
      return reply.code(409).send({ code: error, error, requestId: request.id, ...wanted });
    return reply.send({});
  });

  // The routes of a device looked up by its token: the device the path names, or 401.
  await app.register(async (lookedUp) => {
    lookedUp.addHook("onRequest", async (request, reply) => {
      const { deviceId } = request.params as { deviceId: string };
      const device = await findDeviceByToken(db, deviceId, digests.get(request)!);
      if (!device) return refuse(request, reply);
      devices.set(request, device);
    });

    lookedUp.get(routeUrl(STATE), { config }, async (request, reply) => {
      const device = devices.get(request)!;
      return reply.send({
        project: device.project_id,
        application: device.application_id,
        snapshot: device.target_id,
        settings: device.settings_hash,
        mode: "autonomous",
        licensed: false,
      });
    });

    lookedUp.get(routeUrl(SNAPSHOT), { config }, async (request, reply) => {
      const device = devices.get(request)!;
      const row = device.target_id ? await findSnapshot(db, device.target_id) : undefined;
      // Nothing to run: the agent reads `{}` as "no snapshot".
      if (!row) return reply.send({});
      const secrets = openSnapshotSecrets(opts.tokenSecret, row);
      if (!secrets) throw unreadableSnapshot();
      const env = Object.fromEntries(
        openSnapshotEnv(row.settings.env, secrets).map((v) => [v.name, v.value]),
      );
      const modules = { ...row.settings.modules };
      if (typeof modules["node-red"] !== "string") modules["node-red"] = DEFAULT_DEVICE_NODE_RED;
      return reply.send({
        id: row.id,
        name: row.name,
        description: row.description,
        settings: row.settings.settings,
        flows: await flowsFor(device, row),
        // Node-RED on the device decrypts them with the secret the device was given.
        credentials: encryptCredentials(device.credential_secret, secrets.credentials),
        modules,
        env: { ...env, ...platformEnv(device, row) },
      });
    });

    lookedUp.get(routeUrl(SETTINGS), { config }, async (request, reply) => {
      const device = devices.get(request)!;
      const env = deviceEnv(device);
      return reply.send({
        // The hash the check-in compares: the same stored value.
        hash: device.settings_hash,
        env: Object.fromEntries(env.map((v) => [v.name, v.value])),
        features: {
          "shared-library": false,
          projectComms: false,
          teamBroker: false,
          tables: false,
        },
        assistant: { enabled: false },
      });
    });

    // The agent's events (stopped, crashed …) and its Node-RED's (flows.set …): the device's log.
    lookedUp.post("/logging/device/:deviceId/audit", { config }, async (request, reply) => {
      const device = devices.get(request)!;
      const parsed = AuditBody.safeParse(request.body);
      if (!parsed.success) throw validationError(parsed.error);
      const { event, ...rest } = parsed.data;
      await db.transaction().execute(async (trx) => {
        await recordDeviceEvent(trx, event, "system", device, rest);
        // A Node-RED the agent gave up restarting, or one in safe mode: `device.crashed`.
        const state = CRASH_STATES[event];
        if (state) await recordDeviceCrashed(trx, device, state);
      });
      // A crash (a restart loop the agent gave up on), a start that failed or Node-RED's safe
      // mode fails a device a rollout watches.
      if (FAILING_EVENTS.has(event) && device.rollout_snapshot_id !== null) {
        const info = (rest as { info?: { code?: unknown; info?: unknown } }).info;
        const detail = typeof info?.info === "string" ? `: ${info.info.slice(0, 500)}` : "";
        const reason = `The agent reports ${event}${detail}`;
        if (await failWatchedRolloutDevice(db, device.id, reason, { runningIt: true })) {
          opts.rolloutChanged?.();
        }
      }
      return reply.send({});
    });
  });
}

/** FlowFuse's `FF_*` variables of a device, for the snapshot it runs. */
export function platformEnv(
  device: DeviceDetail,
  snapshot: { id: string; name: string },
): Record<string, string> {
  return {
    FF_DEVICE_ID: device.id,
    FF_DEVICE_NAME: device.name,
    FF_DEVICE_TYPE: device.type,
    FF_SNAPSHOT_ID: snapshot.id,
    FF_SNAPSHOT_NAME: snapshot.name,
    ...(device.application_id &&
      device.application_name !== null && {
        FF_APPLICATION_ID: device.application_id,
        FF_APPLICATION_NAME: device.application_name,
      }),
    ...(device.project_id &&
      device.project_name !== null && {
        FF_PROJECT_ID: device.project_id,
        FF_PROJECT_NAME: device.project_name,
      }),
  };
}
