// The actions on a hosted instance (start, stop, restart, suspend): what each is under way as and
// leads to, the claim that serializes them on the instance's row across every process of the
// platform, and FlowFuse's `meta.state` (their audit entries: events.ts).
import type { InstanceState } from "@flowplane/contract";
import { claimProjectAction, type Db, findProject, type ProjectRow } from "@flowplane/db";
import { type RuntimeStatus } from "@flowplane/runtime";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiError, notFound } from "../core/errors";

export type Action = "start" | "stop" | "restart" | "suspend";

export const IN_FLIGHT = {
  start: "starting",
  stop: "stopping",
  restart: "restarting",
  suspend: "suspending",
} as const satisfies Record<Action, NonNullable<ProjectRow["in_flight"]>>;

export const DESIRED = {
  start: "running",
  stop: "stopped",
  restart: "running",
  suspend: "suspended",
} as const satisfies Record<Action, ProjectRow["state"]>;

/** How long an action waits for the one under way on the same instance. */
const WAIT_FOR_ACTION_MS = 120_000;

export const suspendedError = () =>
  new ApiError(400, "project_suspended", "The instance is suspended: start it first");

export interface Actor {
  userId: string;
  tokenId: string | null;
}

/**
 * Claims the instance's row for an action (`in_flight`), after any action under way on it in
 * whichever process; 404 once it is gone, 409 past the wait.
 */
export async function claimAction(
  db: Db,
  id: string,
  inFlight: NonNullable<ProjectRow["in_flight"]>,
) {
  const deadline = Date.now() + WAIT_FOR_ACTION_MS;
  for (;;) {
    const row = await claimProjectAction(db, id, inFlight);
    if (row) return row;
    if (!(await findProject(db, id))) throw notFound();
    if (Date.now() > deadline) {
      throw new ApiError(
        409,
        "invalid_request",
        "Another action on the instance is still under way",
      );
    }
    await sleep(100);
  }
}

/** FlowFuse's `meta.state`: the action under way; else suspended; else what the runtime says. */
export function metaState(
  project: Pick<ProjectRow, "state" | "in_flight">,
  runtime: RuntimeStatus,
): InstanceState {
  if (project.in_flight) return project.in_flight;
  if (project.state === "suspended") return "suspended";
  switch (runtime.state) {
    case "running":
    case "starting":
    case "stopped":
    case "crashed":
      return runtime.state;
    default:
      return "unknown";
  }
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
