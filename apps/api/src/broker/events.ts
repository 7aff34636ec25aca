// What the broker area writes in the audit log: a team's MQTT clients in the team's log
// (`team.broker.client.*`, never a password or its hash), and the platform's broker tokens in the
// platform's (`platform.broker-token.*`, never a token's value).
import { type Db, recordAudit, type TeamBrokerClientRow } from "@flowplane/db";
import { type Actor, platformLog, teamLog } from "../core/audit";

/** A client created, changed (with what changed) or deleted. */
export function recordClientEvent(
  trx: Db,
  verb: "created" | "updated" | "deleted",
  actor: Actor,
  teamId: string,
  row: TeamBrokerClientRow,
  more: Record<string, unknown> = {},
): Promise<void> {
  const body = { client: { id: row.id, username: row.username, acls: row.acls }, ...more };
  return recordAudit(trx, { event: `team.broker.client.${verb}`, ...teamLog(teamId), actor, body });
}

/** A broker token created or deleted. */
export function recordBrokerTokenEvent(
  trx: Db,
  verb: "created" | "deleted",
  actor: Actor,
  token: { id: string; name: string },
): Promise<void> {
  const body = { token: { id: token.id, name: token.name } };
  return recordAudit(trx, { event: `platform.broker-token.${verb}`, ...platformLog, actor, body });
}
