// What the teams area writes in the audit log, as FlowFuse logs it. A team's creation and
// deletion: `team.created` / `team.deleted` in the team's own log, and `platform.team.created` /
// `platform.team.deleted` in the platform's, so administrators see every team come and go (the
// team's log is the owners'). Every path that creates or deletes a team (a team's owner, a user's
// deletion) goes through these. Its members and invitations in the team's log, an invitee's
// answer in theirs too, and team types in the platform's.
import { type AuditEntry, recordAudit } from "@flowplane/db";
import type { Db } from "@flowplane/db";
import { type Actor, platformLog, teamLog, userLog } from "../core/audit";

interface TeamNamed {
  id: string;
  name: string;
  slug: string;
}

interface Named {
  id: string;
  name: string;
}

const summary = (team: TeamNamed) => ({ id: team.id, name: team.name, slug: team.slug });

/** An entry in the team's log (a rename writes its own with its change, in one statement). */
export const teamEntry = (
  event: string,
  teamId: string,
  actor: Actor,
  body: Record<string, unknown>,
): AuditEntry => ({ event, ...teamLog(teamId), actor, body });

async function recordInBoth(
  trx: Db,
  verb: "created" | "deleted",
  actor: Actor,
  teamId: string,
  body: Record<string, unknown>,
): Promise<void> {
  await recordAudit(trx, teamEntry(`team.${verb}`, teamId, actor, body));
  await recordAudit(trx, { event: `platform.team.${verb}`, ...platformLog, actor, body });
}

export function recordTeamCreated(
  trx: Db,
  actor: Actor,
  team: TeamNamed,
  type: Named,
): Promise<void> {
  return recordInBoth(trx, "created", actor, team.id, { team: summary(team), type });
}

export function recordTeamDeleted(trx: Db, actor: Actor, team: TeamNamed): Promise<void> {
  return recordInBoth(trx, "deleted", actor, team.id, { team: summary(team) });
}

/** A member's role changed or they were removed: who, never anything private. */
export function recordMemberEvent(
  trx: Db,
  verb: "role-changed" | "removed",
  actor: Actor,
  teamId: string,
  member: Named & { username: string },
  role: unknown,
): Promise<void> {
  const user = { id: member.id, username: member.username, name: member.name };
  return recordAudit(trx, teamEntry(`team.user.${verb}`, teamId, actor, { user, role }));
}

/** An invitation sent, sent again or revoked, with whom it is for (`user`). */
export function recordInvitationEvent(
  trx: Db,
  verb: "invited" | "invite-resent" | "uninvited",
  actor: Actor,
  teamId: string,
  invitation: { id: string; role: number },
  user: Record<string, unknown>,
): Promise<void> {
  const body = { invitation: { id: invitation.id, role: invitation.role }, user };
  return recordAudit(trx, teamEntry(`team.user.${verb}`, teamId, actor, body));
}

/**
 * The invitee's answer, in both logs: the team's (`team.user.invite.accepted|rejected`) and the
 * user's own (`user.invitation.accepted|deleted`), FlowFuse's names.
 */
export async function recordInvitationAnswer(
  trx: Db,
  actor: Actor,
  user: Named & { username: string },
  found: { id: string; role: number; team_id: string; team: { name: string } },
  answer: "accepted" | "rejected",
): Promise<void> {
  const body = {
    invitation: { id: found.id, role: found.role },
    user: { id: user.id, username: user.username, name: user.name },
    team: { id: found.team_id, name: found.team.name },
  };
  await recordAudit(trx, teamEntry(`team.user.invite.${answer}`, found.team_id, actor, body));
  await recordAudit(trx, {
    event: answer === "accepted" ? "user.invitation.accepted" : "user.invitation.deleted",
    ...userLog(user.id),
    actor,
    body,
  });
}

/** An administrator created, changed or deleted a team type: in the platform's log. */
export function recordTeamTypeEvent(
  trx: Db,
  verb: "created" | "updated" | "deleted",
  actor: Actor,
  teamType: Named,
  more: Record<string, unknown> = {},
): Promise<void> {
  const body = { teamType: { id: teamType.id, name: teamType.name }, ...more };
  return recordAudit(trx, { event: `platform.team-type.${verb}`, ...platformLog, actor, body });
}
