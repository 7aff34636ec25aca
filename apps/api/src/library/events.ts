// What the library area writes in the audit log: `team.library.entry.saved|deleted` in the team's
// log. A change made by an instance's Node-RED is the platform's (Node-RED does not say who made
// it), its body naming the instance (`by`).
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, teamLog } from "../core/audit";

/** Who changed the library: a user (with their token), or an instance's Node-RED. */
export type LibraryActor = Actor | { instance: { id: string; name: string } };

/** An entry saved, or entries deleted (with `deleteCount`, how many went). */
export function recordLibraryEvent(
  trx: Db,
  verb: "saved" | "deleted",
  actor: LibraryActor,
  teamId: string,
  entry: { type?: string; path: string },
  more: Record<string, unknown> = {},
): Promise<void> {
  const { who, by } =
    typeof actor === "object" && "instance" in actor
      ? { who: "system" as const, by: { instance: actor.instance } }
      : { who: actor, by: {} };
  const body = { entry: { type: entry.type, path: entry.path }, ...more, ...by };
  const event = `team.library.entry.${verb}`;
  return recordAudit(trx, { event, ...teamLog(teamId), actor: who, body });
}
