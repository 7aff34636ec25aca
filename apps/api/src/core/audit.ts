// Which log an audit entry goes in, as FlowFuse keeps them: the entity the entry is about (the
// platform, a user, a team, an application, an instance, a device) and the team whose log shows
// it. Every area's events.ts builds its entries from these and writes them with recordAudit
// (@flowplane/db), in the transaction of their change.
import type { AuditEntry } from "@flowplane/db";

/** Who acted: a user with the token they used (null: a signed-in session), or the platform. */
export type Actor = AuditEntry["actor"];

/** Where an entry is logged. */
export type AuditLog = Pick<AuditEntry, "entity" | "teamId">;

/** The platform's log, the administrators'. */
export const platformLog: AuditLog = { entity: { type: "platform", id: null } };

/** A user's own log. */
export const userLog = (userId: string): AuditLog => ({ entity: { type: "user", id: userId } });

/** A team's log. */
export const teamLog = (teamId: string): AuditLog => ({
  entity: { type: "team", id: teamId },
  teamId,
});

type Owned = "application" | "project" | "device";

/** An application's, an instance's (FlowFuse's project) or a device's log, in its team's. */
export const ownLog = (type: Owned, id: string, teamId: string): AuditLog => ({
  entity: { type, id },
  teamId,
});

/**
 * An entry in an application's, an instance's or a device's log whose body names it first, under
 * its type (`project`: FlowFuse's word for an instance), then what else the event says.
 */
export function ownEntry(
  event: string,
  type: Owned,
  subject: { id: string; name: string | null; team_id: string },
  actor: Actor,
  more: Record<string, unknown> = {},
): AuditEntry {
  const body = { [type]: { id: subject.id, name: subject.name }, ...more };
  return { event, ...ownLog(type, subject.id, subject.team_id), actor, body };
}
