// Every change that could alter what an authentication query answers notifies the channel
// `flowplane_access` (with the schema of the table changed) when its transaction commits, so
// that a process keeping those answers hears of it (access-changes.ts). Row triggers, so that a
// statement that changes nothing (the housekeeping's sweep of expired tokens, most minutes)
// notifies nobody; PostgreSQL folds a transaction's repeats into one notification. TRUNCATE has
// no rows: a statement trigger covers it. A token's `last_used_at`, written in batches, is left
// out: it changes nothing a request sees.
import { type Kysely, sql } from "kysely";

const TRIGGERS: Array<[table: string, events: string]> = [
  [
    "access_tokens",
    "update of digest, user_id, read_only, admin_opt_in, team_restricted, expires_at or delete",
  ],
  ["access_token_teams", "insert or update or delete"],
  ["users", "update or delete"],
  ["teams", "insert or update or delete"],
  ["team_members", "insert or update or delete"],
  ["team_types", "insert or update or delete"],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function flowplane_access_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('flowplane_access', tg_table_schema);
      return null;
    end
    $$
  `.execute(db);
  for (const [table, events] of TRIGGERS) {
    await sql`
      create trigger access_changed after ${sql.raw(events)} on ${sql.table(table)}
      for each row execute function flowplane_access_changed()
    `.execute(db);
    await sql`
      create trigger access_truncated after truncate on ${sql.table(table)}
      for each statement execute function flowplane_access_changed()
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table] of TRIGGERS) {
    await sql`drop trigger if exists access_changed on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists access_truncated on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists flowplane_access_changed()`.execute(db);
}
