// What the FlowFuse device agent calls (HTTP mode), as FlowFuse's deviceLive routes: its check-in
// (`POST /api/v1/devices/<id>/live/state`: 200 `{}` in step, else 409 naming what it should run),
// the snapshot and settings it then downloads, and the audit events it and its Node-RED post
// (`POST /logging/device/<id>/audit`). Every call needs the device's own token (`fpd_…`), which
// reaches these routes of this device and nothing else; no other token reaches them. Not in the
// OpenAPI document: not for people.
import { bearerToken, encryptCredentials, parseToken, tokenDigest } from "@flowplane/auth";
import {
  checkInDevice,
  type Db,
  type DeviceDetail,
  findDeviceByToken,
  findSnapshot,
  recordAudit,
} from "@flowplane/db";
import { freeForm, Text } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { toErrorResponse, unauthorized, validationError } from "../core/errors";
import { contentOf, envOf } from "../snapshots/content";
import { deviceEnv } from "./settings";

export interface DeviceLiveOptions {
  db: Db;
  tokenSecret: string;
}

/** The paths these routes guard themselves. */
export const DEVICE_LIVE = /^\/(api\/v1\/devices\/[^/?]+\/live|logging\/device)(\/|\?|$)/;

/** Node-RED 5 needs Node 22.9; agents on Node 20 run 4.x: what a snapshot without one gets. */
export const DEFAULT_DEVICE_NODE_RED = "4.1.15";

/** Storable text: one device's NUL or lone surrogate would fail the batch its check-in is in. */
const Reported = Text.max(256).nullable().optional();

/** The agent's check-in body (`getState()`); unknown fields are the agent's, and ignored. */
const CheckInBody = z
  .object({
    state: Reported,
    agentVersion: Reported,
    nodeRedVersion: Reported,
    nodejsVersion: Reported,
    snapshot: Reported,
    settings: Reported,
    project: Reported,
    application: Reported,
  })
  .nullable()
  .optional();

/**
 * The events a device may write into its team's audit log: what its agent reports (`stopped`,
 * `crashed` …) and what its Node-RED forwards (FlowFuse's list of runtime events). Only these, so
 * that a device cannot write one of the platform's own events (`team.deleted`) into the log.
 */
export const DEVICE_AUDIT_EVENTS = [
  "stopped",
  "crashed",
  "start-failed",
  "safe-mode",
  "resource.cpu",
  "resource.memory",
  "api.error",
  "flows.set",
  "flows.reloaded",
  "nodes.install",
  "nodes.remove",
  "modules.install",
  "library.set",
  "settings.update",
  "context.delete",
  "auth.login",
  "auth.login.revoke",
  "auth.logout",
] as const;

/** An event and its free-form fields: storable, bounded in depth and size (contract's freeForm). */
const AuditBody = freeForm().pipe(
  z.object({ event: z.enum(DEVICE_AUDIT_EVENTS) }).catchall(z.unknown()),
);

/** FlowFuse's '0' is its starter flows: a device reporting it runs no snapshot of ours. */
const snapshotOf = (value: string | null | undefined) =>
  value === undefined || value === null || value === "0" ? null : value;

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
    digests.set(request, tokenDigest(opts.tokenSecret, token));
  });

  // The agent's own calls: not counted against people's limits.
  const config = { rateLimit: false as const };

  // The hot path: one statement records the check-in and reads the target.
  app.post("/api/v1/devices/:deviceId/live/state", { config }, async (request, reply) => {
    const digest = digests.get(request)!;
    const parsed = CheckInBody.safeParse(request.body);
    if (!parsed.success) throw validationError(parsed.error);
    const body = parsed.data ?? {};
    const { deviceId } = request.params as { deviceId: string };
    const target = await checkInDevice(db, deviceId, digest, {
      // A null body is the agent updating (FlowFuse's reading).
      state: parsed.data === null ? "updating" : (body.state ?? null),
      agentVersion: body.agentVersion ?? null,
      nodeRedVersion: body.nodeRedVersion ?? null,
      nodejsVersion: body.nodejsVersion ?? null,
      snapshot: snapshotOf(body.snapshot),
      settings: body.settings ?? null,
    });
    // A wrong token, or a device deleted: the agent stops and forgets what it ran.
    if (!target) return refuse(request, reply);
    const wanted = {
      project: target.project_id,
      application: target.application_id,
      snapshot: target.target,
      settings: target.settings_hash,
    };
    const error =
      "project" in body && (body.project ?? null) !== target.project_id
        ? "incorrect-project"
        : "application" in body && (body.application ?? null) !== target.application_id
          ? "incorrect-application"
          : snapshotOf(body.snapshot) !== target.target
            ? "incorrect-snapshot"
            : // Settings matter only with a snapshot to run (the agent fetches none without one).
              target.target !== null && (body.settings ?? null) !== target.settings_hash
              ? "incorrect-settings"
              : undefined;
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

    lookedUp.get("/api/v1/devices/:deviceId/live/state", { config }, async (request, reply) => {
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

    lookedUp.get("/api/v1/devices/:deviceId/live/snapshot", { config }, async (request, reply) => {
      const device = devices.get(request)!;
      const row = device.target_id ? await findSnapshot(db, device.target_id) : undefined;
      // Nothing to run: the agent reads `{}` as "no snapshot".
      if (!row) return reply.send({});
      const content = contentOf(opts.tokenSecret, row);
      const env = Object.fromEntries(
        envOf(content.settings, content.secrets).map((v) => [v.name, v.value]),
      );
      const modules = { ...content.settings.modules };
      if (typeof modules["node-red"] !== "string") modules["node-red"] = DEFAULT_DEVICE_NODE_RED;
      return reply.send({
        id: row.id,
        name: row.name,
        description: row.description,
        settings: content.settings.settings,
        flows: content.flows,
        // Node-RED on the device decrypts them with the secret the device was given.
        credentials: encryptCredentials(device.credential_secret, content.secrets.credentials),
        modules,
        env: { ...env, ...platformEnv(device, row) },
      });
    });

    lookedUp.get("/api/v1/devices/:deviceId/live/settings", { config }, async (request, reply) => {
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
      await recordAudit(db, {
        event,
        entity: { type: "device", id: device.id },
        teamId: device.team_id,
        actor: "system",
        body: { device: { id: device.id, name: device.name }, ...rest },
      });
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
