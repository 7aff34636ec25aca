// What the device agent's live routes (live.ts) take and answer: the check-in body, the audit
// events an agent and its Node-RED may post, and each route's document for the OpenAPI document
// (tag "Device agent", scheme `deviceToken`; core/route-docs.ts).
import { ErrorBody, freeForm, Text } from "@flowplane/contract";
import { z } from "zod";
import { type RouteDoc, type RouteResponse } from "../core/route-docs";

/** Storable text: one device's NUL or lone surrogate would fail the batch its check-in is in. */
const Reported = Text.max(256).nullable().optional();

/** The agent's check-in body (`getState()`); unknown fields are the agent's, and ignored. */
export const CheckInBody = z
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
export const AuditBody = freeForm().pipe(
  z.object({ event: z.enum(DEVICE_AUDIT_EVENTS) }).catchall(z.unknown()),
);

export const AGENT_TAG = "Device agent";

const DeviceParams = z.object({ deviceId: z.string().describe("The device's id") });
const Owner = z.string().nullable();

/** What the device should run: the check-in's 409 and `GET …/live/state` name it alike. */
const Wanted = {
  project: Owner.describe("The instance the device belongs to, or null"),
  application: Owner.describe("The application the device belongs to, or null"),
  snapshot: Owner.describe("The snapshot it should run (its target), or null"),
  settings: Owner.describe("The hash of the settings it should have, or null"),
};

const CheckInMismatch = ErrorBody.extend({
  code: z.enum([
    "incorrect-project",
    "incorrect-application",
    "incorrect-snapshot",
    "incorrect-settings",
  ]),
  ...Wanted,
});

const LiveState = z.object({
  ...Wanted,
  mode: z.literal("autonomous"),
  licensed: z.literal(false),
});

const LiveSnapshot = z.union([
  z.object({}).strict().describe("No target: nothing to run"),
  z.object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    settings: z.record(z.string(), z.unknown()),
    flows: z.array(z.unknown()),
    credentials: z
      .object({ $: z.string() })
      .describe("Encrypted with the device's credentialSecret"),
    modules: z.record(z.string(), z.string()),
    env: z.record(z.string(), z.string()),
  }),
]);

const LiveSettings = z.object({
  hash: Owner,
  env: z.record(z.string(), z.string()),
  features: z.record(z.string(), z.boolean()),
  assistant: z.object({ enabled: z.boolean() }),
});

const refused: Record<number, RouteResponse> = {
  401: { description: "Not this device's own token, or the device is gone (`unauthorized`)" },
  500: { description: "Unexpected error (`unexpected_error`); quote the requestId" },
};

const agentRoute = (
  doc: Omit<RouteDoc, "tags" | "security" | "params" | "responses"> & {
    responses: Record<number, RouteResponse>;
  },
): RouteDoc => ({
  ...doc,
  tags: [AGENT_TAG],
  security: "deviceToken",
  params: DeviceParams,
  responses: { ...doc.responses, ...refused },
});

export const CHECK_IN = agentRoute({
  id: "deviceAgent-checkIn",
  method: "POST",
  path: "/api/v1/devices/{deviceId}/live/state",
  summary: "The agent's check-in: its state, and whether it runs what it should",
  description:
    "What the device agent posts every interval (HTTP mode). 200 `{}` when the device runs its target snapshot with its settings; else 409 naming what it should run, whose `code` says what differs (FlowFuse's `incorrect-*`). A null body is the agent updating.",
  body: CheckInBody,
  responses: {
    200: { description: "In step", schema: z.object({}).strict() },
    400: { description: "A field is not storable text, or too long (`invalid_request`)" },
    409: { description: "Not what it should run: what it should", schema: CheckInMismatch },
    413: { description: "The body is larger than the limit (`payload_too_large`)" },
    415: { description: "The body is not `application/json` (`unsupported_media_type`)" },
  },
});

export const STATE = agentRoute({
  id: "deviceAgent-state",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/live/state",
  summary: "What the device should run",
  description:
    "The device's owner, target snapshot and settings hash, as the check-in's 409 names them.",
  responses: { 200: { description: "What it should run", schema: LiveState } },
});

export const SNAPSHOT = agentRoute({
  id: "deviceAgent-snapshot",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/live/snapshot",
  summary: "The device's target snapshot, to run",
  description:
    "Flows, their credentials encrypted with the device's `credentialSecret`, Node-RED settings, modules (`node-red` included) and variables (the snapshot's, and FlowFuse's `FF_*`). `{}` when the device has no target.",
  responses: { 200: { description: "The snapshot, or `{}`", schema: LiveSnapshot } },
});

export const SETTINGS = agentRoute({
  id: "deviceAgent-settings",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/live/settings",
  summary: "The device's settings: its variables and their hash",
  description:
    "The variables it is given (its group's, its own over them; hidden values opened) with the hash the check-in compares.",
  responses: { 200: { description: "The settings", schema: LiveSettings } },
});

/** The agent's live routes under /api/v1, for the OpenAPI document. */
export const DEVICE_LIVE_DOCS: RouteDoc[] = [CHECK_IN, STATE, SNAPSHOT, SETTINGS];
