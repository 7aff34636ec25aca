// What setting a device's target snapshot means, said one way by every command that sets one
// (devices, device groups, an instance's devices, pipelines deploying to devices). Setting it runs
// nothing: the platform pushes nothing to a device; its agent asks at each check-in (an HTTP poll,
// every 60 seconds unless it was started with another interval) and deploys the target then.
import type { Command } from "commander";

/** When a device acts on a new target. */
export const AT_CHECK_IN = "at its next check-in (agents check in every minute by default)";

/** `device line-1's` … : what now has the target, and who deploys it. */
export function targetSet(
  owner: string,
  deploys: "the device" | "each of its devices",
  snapshot: { id: string; name: string },
): string {
  return (
    `Set ${owner} target snapshot to ${snapshot.name} (id ${snapshot.id}); ` +
    `${deploys} deploys it ${AT_CHECK_IN}.\n`
  );
}

/** The target cleared: each device learns of it when it next checks in. */
export function targetCleared(owner: string, learns: "the device" | "each of its devices"): string {
  return `Cleared ${owner} target snapshot; ${learns} learns of it ${AT_CHECK_IN}.\n`;
}

/** The target set to `snapshot`, or cleared (none). */
export function targetChanged(
  owner: string,
  deploys: "the device" | "each of its devices",
  snapshot: { id: string; name: string } | undefined,
): string {
  return snapshot ? targetSet(owner, deploys, snapshot) : targetCleared(owner, deploys);
}

/** A command that sets or clears a target takes a snapshot or --clear: one of them (exit 2). */
export function needSnapshotOrClear(
  command: Command,
  snapshot: string | undefined,
  clear: boolean | undefined,
): void {
  if ((snapshot === undefined) === !clear) {
    command.error("error: give a snapshot or --clear", { exitCode: 2 });
  }
}
