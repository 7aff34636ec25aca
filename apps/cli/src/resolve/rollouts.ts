// Rollouts as a command line names them: by id only (a rollout has no name). With --team, the
// rollout must be one of that team's applications' (rule.ts's "not found" otherwise), so that the
// --team a user gives every command of a group means the same on each.
import type { Rollout } from "@flowplane/contract";
import type { Client } from "../client";
import { CliError } from "../errors";
import { resolveApplication } from "./instances";
import { orNone } from "./rule";

/** The rollout of this id, in the team given (when one is). */
export async function resolveRollout(
  client: Client,
  given: string,
  team?: string,
): Promise<Rollout> {
  const rollout = await orNone(client.rollouts.byId.query({ rolloutId: given }));
  const inTeam =
    rollout !== undefined &&
    (team === undefined ||
      (await resolveApplication(client, rollout.application.id, team).then(
        () => true,
        (error: unknown) => {
          if (error instanceof CliError && error.code === "not_found") return false;
          throw error;
        },
      )));
  if (!rollout || !inTeam) {
    const scope = team === undefined ? "" : ` in team ${team}`;
    throw new CliError(`no rollout${scope} has the id "${given}"`, "not_found");
  }
  return rollout;
}
