// A team's creation and deletion, logged as FlowFuse logs them: `team.created` / `team.deleted` in
// the team's own log, and `platform.team.created` / `platform.team.deleted` in the platform's, so
// administrators see every team come and go (the team's log is the owners'). Every path that
// creates or deletes a team (a team's owner, a user's deletion) goes through these.
import { type AuditEntry, recordAudit } from "@flowplane/db";
import type { Db } from "@flowplane/db";

interface TeamNamed {
  id: string;
  name: string;
  slug: string;
}

const summary = (team: TeamNamed) => ({ id: team.id, name: team.name, slug: team.slug });

export async function recordTeamCreated(
  trx: Db,
  actor: AuditEntry["actor"],
  team: TeamNamed,
  type: { id: string; name: string },
): Promise<void> {
  const body = { team: summary(team), type };
  await recordAudit(trx, {
    event: "team.created",
    entity: { type: "team", id: team.id },
    teamId: team.id,
    actor,
    body,
  });
  await recordAudit(trx, {
    event: "platform.team.created",
    entity: { type: "platform", id: null },
    actor,
    body,
  });
}

export async function recordTeamDeleted(
  trx: Db,
  actor: AuditEntry["actor"],
  team: TeamNamed,
): Promise<void> {
  const body = { team: summary(team) };
  await recordAudit(trx, {
    event: "team.deleted",
    entity: { type: "team", id: team.id },
    teamId: team.id,
    actor,
    body,
  });
  await recordAudit(trx, {
    event: "platform.team.deleted",
    entity: { type: "platform", id: null },
    actor,
    body,
  });
}
