// How one event becomes notifications: one `insert … select` per event, over the recipients a
// query names (a team's members from a role up, or an invitation's invitee), whatever their
// number, so an event of a large team costs one statement. The actor is never told of their own
// action. Runs in the sequencer's transaction (events/sequencer.ts): each event notifies once.
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema";

export interface NewNotification {
  type: string;
  data: Record<string, unknown>;
  /** The event it came from (its public id). */
  eventSeq: string;
  createdAt: Date;
  /** Who acted: not notified. */
  actorId: string | null;
}

/** Who an event concerns. */
export type Recipients =
  | { team: string; minRole: number }
  /** The invitee of an invitation addressed to a user (one sent to an email address has none). */
  | { invitation: string };

const newId = sql<string>`replace(gen_random_uuid()::text, '-', '')`;

/** Writes the notification for each recipient; answers how many were written. */
export async function notify(
  db: Kysely<Database>,
  to: Recipients,
  notification: NewNotification,
): Promise<number> {
  const { type, data, eventSeq, createdAt, actorId } = notification;
  const values = sql`${newId}, ${type}, ${JSON.stringify(data)}::jsonb, ${eventSeq}::bigint,
    ${createdAt}::timestamptz`;
  const notActor = actorId === null ? sql`true` : sql`r.user_id <> ${actorId}`;
  const recipients =
    "team" in to
      ? sql`select user_id from team_members where team_id = ${to.team} and role >= ${to.minRole}`
      : // Only an invitation addressed to a user: an email on a profile is not verified, so a
        // profile naming the invited address is not its owner (as invitations.ts judges too).
        sql`select i.invitee_id as user_id from invitations i where i.id = ${to.invitation}`;
  const result = await sql`
    insert into notifications (id, type, data, event_seq, created_at, user_id)
    select ${values}, r.user_id from (${recipients}) r
    where r.user_id is not null and ${notActor}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The names of these teams, by id (a notification names its team). */
export async function teamNames(
  db: Kysely<Database>,
  ids: string[],
): Promise<Map<string, { id: string; name: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("teams").select(["id", "name"]).where("id", "in", ids).execute();
  return new Map(rows.map((row) => [row.id, row]));
}
