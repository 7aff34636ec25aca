// A person's inbox: their notifications newest first, the unread count, marking read or unread,
// deleting, and what the sweep removes. Every statement names the owner: another's id is as
// absent as one that never was.
import { type Kysely, type Selectable, sql } from "kysely";
import type { Database } from "../schema";
import type { NotificationsTable } from "../schema-notifications";

export type NotificationRow = Selectable<NotificationsTable>;

export interface NotificationPage {
  rows: NotificationRow[];
  total: number;
  unread: number;
  nextCursor?: string;
}

/** A page of the person's notifications, newest first, with their total and unread counts. */
export async function listNotifications(
  db: Kysely<Database>,
  userId: string,
  request: { limit: number; cursor?: string; unreadOnly?: boolean },
): Promise<NotificationPage> {
  let rows = db.selectFrom("notifications as n").selectAll().where("n.user_id", "=", userId);
  if (request.unreadOnly) rows = rows.where("n.read", "=", false);
  if (request.cursor !== undefined) {
    rows = rows.where(
      sql<boolean>`(n.created_at, coalesce(n.event_seq, 0), n.id)
        < (select c.created_at, coalesce(c.event_seq, 0), c.id from notifications c
           where c.id = ${request.cursor} and c.user_id = ${userId})`,
    );
  }
  const [found, counts] = await Promise.all([
    // Events of the same instant (a clock's resolution: PGlite's is coarse) in the order the
    // platform numbered them, never by their random ids.
    rows
      .orderBy("n.created_at", "desc")
      .orderBy(sql`coalesce(n.event_seq, 0)`, "desc")
      .orderBy("n.id", "desc")
      .limit(request.limit + 1)
      .execute(),
    db
      .selectFrom("notifications")
      .select([
        sql<number>`count(*)::int`.as("total"),
        sql<number>`(count(*) filter (where not read))::int`.as("unread"),
      ])
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow(),
  ]);
  const more = found.length > request.limit;
  const page = more ? found.slice(0, request.limit) : found;
  return {
    rows: page,
    total: request.unreadOnly ? counts.unread : counts.total,
    unread: counts.unread,
    nextCursor: more ? page.at(-1)!.id : undefined,
  };
}

/** How many of the person's notifications are unread (the badge on every page). */
export async function countUnreadNotifications(
  db: Kysely<Database>,
  userId: string,
): Promise<number> {
  const row = await db
    .selectFrom("notifications")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("user_id", "=", userId)
    .where("read", "=", false)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Marks the person's notifications among `ids` read or unread; answers how many were theirs. */
export async function markNotifications(
  db: Kysely<Database>,
  userId: string,
  ids: string[],
  read: boolean,
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable("notifications")
    .set({ read })
    .where("user_id", "=", userId)
    .where("id", "in", ids)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Those of `ids` that are not the person's notifications (another's, or none at all). */
export async function notificationsNotOwned(
  db: Kysely<Database>,
  userId: string,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const own = await db
    .selectFrom("notifications")
    .select("id")
    .where("user_id", "=", userId)
    .where("id", "in", ids)
    .execute();
  const found = new Set(own.map((row) => row.id));
  return ids.filter((id) => !found.has(id));
}

/** Deletes one of the person's notifications; false: none of theirs has that id. */
export async function deleteNotification(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom("notifications")
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Bounds every inbox: read notifications older than `readBefore` go, and anything past a
 * person's newest `keep`, read or not. Answers how many went.
 */
export async function pruneNotifications(
  db: Kysely<Database>,
  readBefore: Date,
  keep: number,
): Promise<number> {
  const read = await db
    .deleteFrom("notifications")
    .where("read", "=", true)
    .where("created_at", "<", readBefore)
    .executeTakeFirst();
  const { rows } = await sql<{ removed: string }>`
    with ranked as (
      select id, row_number() over (partition by user_id
        order by created_at desc, coalesce(event_seq, 0) desc, id desc) as n
      from notifications
    ), gone as (
      delete from notifications where id in (select id from ranked where n > ${keep}) returning id
    )
    select count(*)::text as removed from gone`.execute(db);
  return Number(read.numDeletedRows) + Number(rows[0]?.removed ?? 0);
}
