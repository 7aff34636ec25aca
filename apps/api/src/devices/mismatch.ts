// Whether a device runs what the platform wants of it, from what it reports (an HTTP check-in's
// body or an MQTT status): FlowFuse's checks, in FlowFuse's order, naming the first that fails.
import type { DeviceTarget } from "@flowplane/db";
import type { z } from "zod";
import type { CheckInBody } from "./live-schemas";

type Report = NonNullable<z.infer<typeof CheckInBody>>;

/**
 * An application's device whose agent, given its first target, took it as an instance's (the
 * agent 4.2's `setState` reads the `project` key every 409 carries as "new instance assigned"
 * while it holds no snapshot, and forgets its application): it runs its target with its
 * settings, reporting neither owner. In step, so that it does not stop and start Node-RED again
 * for an application it runs already (FlowFuse's `incorrect-application` here restarts it); its
 * next target's 409 names the application, which the agent then takes, in the same one update.
 */
function ranFirstTarget(body: Report, snapshot: string | null, target: DeviceTarget): boolean {
  return (
    target.application_id !== null &&
    (body.application ?? null) === null &&
    (body.project ?? null) === null &&
    target.target !== null &&
    snapshot === target.target &&
    (body.settings ?? null) === target.settings_hash
  );
}

/** FlowFuse's '0' is its starter flows: a device reporting it runs no snapshot of ours. */
export const snapshotOf = (value: string | null | undefined) =>
  value === undefined || value === null || value === "0" ? null : value;

/** The first of FlowFuse's checks the report fails (its 409 `error`), or undefined: in step. */
export function mismatchOf(
  body: Report,
  target: DeviceTarget,
):
  | "incorrect-project"
  | "incorrect-application"
  | "incorrect-snapshot"
  | "incorrect-settings"
  | undefined {
  const snapshot = snapshotOf(body.snapshot);
  return "project" in body && (body.project ?? null) !== target.project_id
    ? "incorrect-project"
    : "application" in body &&
        (body.application ?? null) !== target.application_id &&
        !ranFirstTarget(body, snapshot, target)
      ? "incorrect-application"
      : snapshot !== target.target
        ? "incorrect-snapshot"
        : // Settings matter only with a snapshot to run (the agent fetches none without one).
          target.target !== null && (body.settings ?? null) !== target.settings_hash
          ? "incorrect-settings"
          : undefined;
}
