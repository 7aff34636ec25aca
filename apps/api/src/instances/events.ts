// What the instances area writes in the audit log, as FlowFuse logs it: every event in the
// instance's own log (`project.*`; `flows.set` when its Node-RED saves deployed flows), the body
// naming the instance first. Never a value of a variable or a secret: names and ids only.
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, ownEntry } from "../core/audit";
import { type Action, message } from "./actions";

/** What an action done leads to in the log. */
const ACTION_EVENT = {
  start: "project.started",
  stop: "project.stopped",
  restart: "project.restarted",
  suspend: "project.suspended",
} as const satisfies Record<Action, string>;

export type InstanceEvent =
  | "project.created"
  | "project.settings.updated"
  | "project.deleted"
  | "flows.set"
  | "project.start-failed"
  | (typeof ACTION_EVENT)[Action];

interface InstanceNamed {
  id: string;
  name: string;
  team_id: string;
}

export function recordInstanceEvent(
  trx: Db,
  event: InstanceEvent,
  actor: Actor,
  project: InstanceNamed,
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(trx, ownEntry(event, "project", project, actor, more));
}

/** An action done: `project.started`, `project.stopped`… */
export const recordActionDone = (trx: Db, action: Action, actor: Actor, project: InstanceNamed) =>
  recordInstanceEvent(trx, ACTION_EVENT[action], actor, project);

/** `project.start-failed`, with why (the driver's words: never a secret). */
export function recordStartFailed(
  trx: Db,
  project: InstanceNamed,
  actor: Actor,
  error: unknown,
): Promise<void> {
  const more = { error: { message: message(error) } };
  return recordInstanceEvent(trx, "project.start-failed", actor, project, more);
}

/** A change of the instance's name or variables: the variables' names only, never the values. */
export function recordSettingsUpdated(
  trx: Db,
  actor: Actor,
  before: InstanceNamed & { settings: { env?: { name: string }[] } },
  change: { name?: string; env?: { name: string }[] },
): Promise<void> {
  const { name, env } = change;
  const names = (vars: { name: string }[] | undefined) => (vars ?? []).map((v) => v.name);
  return recordInstanceEvent(
    trx,
    "project.settings.updated",
    actor,
    { ...before, name: name ?? before.name },
    {
      ...(name !== undefined && name !== before.name && { name: { old: before.name, new: name } }),
      ...(env && { env: { old: names(before.settings.env), new: names(env) } }),
    },
  );
}
