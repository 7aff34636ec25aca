// Events as integrators read them (GET /teams/{teamId}/events, docs/events.md): the envelope the
// stream and the JSON list share, and the catalogue of a team's event types — every team-scoped
// audit entry under its audit event's name, and what the platform tells that is not audited —
// each with a description and the schema of its `data`.
import { z } from "zod";
import { Id, ListMeta, MAX_PAGE_SIZE, Text, Timestamp } from "./common";

/** Something an event names: its id and its name at the time. */
const Named = z.object({ id: Id, name: z.string() });

/** An audit entry's body, as the audit log shows it: its fields vary with the event. */
const AuditBody = z.looseObject({}).describe("The audit entry's body, as the audit log shows it");

/** One event type: what it means, and its `data`. */
export interface EventType {
  description: string;
  data: z.ZodType;
  /** Whether it is an audit entry too (its `data` is the entry's body). */
  audited: boolean;
}

const audit = (description: string): EventType => ({ description, data: AuditBody, audited: true });
const told = (description: string, data: z.ZodType): EventType => ({
  description,
  data,
  audited: false,
});

/** Each verb of a family of audit events, described by the family's words. */
function family(prefix: string, what: string, verbs: readonly string[]) {
  return Object.fromEntries(
    verbs.map((verb) => [`${prefix}.${verb}`, audit(`${what}: ${verb.replaceAll("-", " ")}`)]),
  );
}

const CRUD = ["created", "updated", "deleted"] as const;
const TOGGLED = ["enabled", "disabled"] as const;

/** What the platform tells that is not audited, with exactly these data shapes. */
const PLATFORM_EVENTS = {
  "device.online": told("A device connected to the platform", z.object({ device: Named })),
  "device.offline": told("A device's connection ended", z.object({ device: Named })),
  "device.crashed": told(
    "A device's Node-RED stopped unexpectedly",
    z.object({ device: Named, state: z.string() }),
  ),
  "device.snapshot.running": told(
    "A device reports running a new snapshot (null: none; a name null: a snapshot deleted since)",
    z.object({
      device: Named,
      snapshot: z.object({ id: Id, name: z.string().nullable() }).nullable(),
    }),
  ),
  "project.crashed": told(
    "An instance's Node-RED stopped unexpectedly",
    z.object({ project: Named, reason: z.string().nullable() }),
  ),
  "project.recovered": told("A crashed instance runs again", z.object({ project: Named })),
  "application.pipeline.stage-deploy-started": told(
    "A pipeline stage's deploy started",
    z.object({
      application: Named,
      pipeline: Named,
      pipelineStage: Named,
      pipelineStageTarget: Named,
    }),
  ),
} satisfies Record<string, EventType>;

/** Every team-scoped audit event (account and platform entries are on no team's stream). */
const AUDIT_EVENTS = {
  ...family("team", "The team", ["created", "deleted"]),
  "team.settings.updated": audit("The team's settings (its name, slug, type) changed"),
  ...family("team.user", "A member", ["role-changed", "removed", "invited", "invite-resent"]),
  "team.user.uninvited": audit("An invitation was withdrawn"),
  ...family("team.user.invite", "An invitation was answered", ["accepted", "rejected"]),
  ...family("team.broker.client", "A team broker client", CRUD),
  ...family("team.webhook", "A team webhook (its URL's origin only)", CRUD),
  ...family("team.device", "A device of the team", [
    ...CRUD,
    "assigned",
    "unassigned",
    "bulk-deleted",
    "credentials-generated",
  ]),
  ...family("team.device.developer-mode", "A device's developer mode", TOGGLED),
  ...family("team.device.remote-access", "A device's remote access", TOGGLED),
  ...family("team.device.provisioning", "A provisioning token", CRUD),
  ...family("team.library.entry", "A team library entry", ["saved", "deleted"]),
  ...family("application", "An application", CRUD),
  ...family("application.device", "A device of an application", ["assigned", "unassigned"]),
  ...family("application.device.snapshot", "A device snapshot of an application", [
    "created",
    "imported",
    "device-target-set",
    "updated",
    "deleted",
    "exported",
  ]),
  ...family("application.deviceGroup", "A device group", [
    ...CRUD,
    "members.changed",
    "settings.updated",
  ]),
  ...family("application.pipeline", "A pipeline", [
    ...CRUD,
    "stage-added",
    "stage-updated",
    "stage-deleted",
    "stage-deployed",
    "stage-deploy-failed",
  ]),
  ...family("application.rollout", "A rollout", [
    "created",
    "started",
    "wave-started",
    "waiting-approval",
    "approved",
    "paused",
    "resumed",
    "device-failed",
    "succeeded",
    "rolled-back",
    "failed",
    "aborted",
  ]),
  ...family("project", "An instance", [
    "created",
    "deleted",
    "settings.updated",
    "started",
    "stopped",
    "restarted",
    "suspended",
    "start-failed",
    "flow-imported",
    "assigned-to-pipeline-stage",
  ]),
  "flows.set": audit("An instance's flows were replaced"),
  ...family("project.snapshot", "An instance snapshot", [
    "created",
    "imported",
    "rolled-back",
    "device-target-set",
    "updated",
    "deleted",
    "exported",
  ]),
  ...family("project.device", "A device of an instance", ["assigned", "unassigned"]),
  ...family("project.device.snapshot", "A device snapshot of an instance", ["created"]),
  ...family("device", "A device", [
    "assigned",
    "settings.updated",
    "credential.generated",
    "restarted",
    "suspended",
    "started",
    "restart-failed",
    "suspend-failed",
    "start-failed",
  ]),
  "device.snapshot.target-set": audit("A device's target snapshot was set"),
  ...family("device.developer-mode", "The device's developer mode", TOGGLED),
  ...family("device.remote-access", "The device's remote access", TOGGLED),
  ...family("device.rollout", "A rollout, on this device", ["deploying", "healthy", "rolled-back"]),
} satisfies Record<string, EventType>;

/** Every event type a team's stream carries. */
export const EVENT_TYPES: Readonly<Record<string, EventType>> = {
  ...AUDIT_EVENTS,
  ...PLATFORM_EVENTS,
};

export const EventName = Text.min(1).max(128);

/** The envelope every event has, whatever its type. */
const EnvelopeFields = {
  id: z
    .string()
    .regex(/^[0-9]+$/)
    .describe("The event's public id: events are ordered by it (a `Last-Event-ID` or `cursor`)"),
  teamId: Id,
  createdAt: Timestamp,
  resource: z
    .object({
      type: z.string().describe("`team`, `application`, `project` (an instance) or `device`"),
      id: z.string().nullable(),
    })
    .describe("What the event is about"),
  actor: z.object({ id: Id }).nullable().describe("The user who acted; null: the platform"),
};

/** An event as the stream and the list show it. */
export const TeamEvent = z
  .object({ ...EnvelopeFields, type: z.string(), data: z.looseObject({}) })
  .meta({ id: "Event" });
export type TeamEvent = z.infer<typeof TeamEvent>;

/** Each type's own schema, as the OpenAPI document's `EventOf…` components. */
export const EVENT_SCHEMAS = Object.entries(EVENT_TYPES).map(([type, entry]) =>
  z
    .object({ ...EnvelopeFields, type: z.literal(type), data: entry.data })
    .describe(entry.description)
    .meta({ id: `Event_${type.replace(/[^A-Za-z0-9]+/g, "_")}` }),
);

/** Every type's schema, told apart by `type`: one documented schema per type. */
export const TypedEvent = z
  .discriminatedUnion("type", EVENT_SCHEMAS as unknown as [z.ZodObject, ...z.ZodObject[]])
  .meta({ id: "TypedEvent" });

/** How many `type` values a request may give. */
export const MAX_EVENT_TYPES = 50;

/** The list's and the stream's query parameters. */
export const EventsQuery = z.object({
  type: z
    .union([EventName, z.array(EventName).min(1).max(MAX_EVENT_TYPES)])
    .optional()
    .describe(
      "Only these types: comma-separated (`type=a,b`) or repeated (`type=a&type=b`), exact names",
    ),
  resourceType: z
    .enum(["team", "application", "project", "device"])
    .optional()
    .describe("Only events about this kind of resource"),
  resourceId: Id.optional().describe("Only events about this resource (with `resourceType`)"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(100)
    .describe(`JSON only: how many events (1–${MAX_PAGE_SIZE}, default 100)`),
  cursor: z
    .string()
    .regex(/^[0-9]{1,19}$/, "Not a valid cursor")
    .optional()
    .describe("JSON only: the `meta.next_cursor` of the previous page (an event's id)"),
});
export type EventsQuery = z.infer<typeof EventsQuery>;

/** A page of events, oldest first. */
export const EventList = z
  .object({ meta: ListMeta, events: z.array(TypedEvent) })
  .meta({ id: "EventList" });
export type EventList = z.infer<typeof EventList>;

/** The types a `type` parameter names, split at commas. */
export function eventTypesOf(type: string | string[] | undefined): string[] | undefined {
  if (type === undefined) return undefined;
  const names = [type]
    .flat()
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean);
  return names.length ? names : undefined;
}
