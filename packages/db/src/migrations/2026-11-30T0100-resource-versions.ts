// Writes that don't collide (issue 40): a version on each resource a client reads and then
// writes back (teams, applications, instances, devices, device groups), its ETag. A row trigger
// bumps it on every update that changes a column the representation a client overwrites is made
// of, whatever code path updates it; the columns the platform changes by itself (a device's
// check-in: last seen, state, versions, the snapshot it runs; an instance's transitions; digests
// of credentials; `updated_at`) are left out, so that they do not fail every `If-Match`. A
// device group's members live on the devices' rows: a trigger on `devices` bumps the version of
// the group a device leaves and of the one it joins (a change of `group_id`, whichever code path:
// a group's PATCH, a device added to another group, a device moved out of its application; or the
// device deleted).
import { type Kysely, sql } from "kysely";

/** Each table and the columns whose changes leave its version alone. */
export const VERSIONED: Record<string, string[]> = {
  teams: ["updated_at"],
  applications: ["updated_at"],
  projects: ["updated_at", "in_flight", "in_flight_at", "crashed_at", "token_digest"],
  devices: [
    "updated_at",
    "token_digest",
    "otc_digest",
    "otc_expires_at",
    "credential_secret",
    "broker_password_digest",
    "editor_token_digest",
    "settings_hash",
    "active_snapshot_id",
    "active_settings_hash",
    "state",
    "last_seen_at",
    "agent_version",
    "node_red_version",
    "nodejs_version",
    "mqtt_connected",
    "online",
    "announced_snapshot_id",
    "rollout_snapshot_id",
  ],
  device_groups: ["updated_at"],
};

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function flowplane_bump_version() returns trigger language plpgsql as $$
    begin
      if (to_jsonb(new) - tg_argv) is distinct from (to_jsonb(old) - tg_argv) then
        new.version := old.version + 1;
      end if;
      return new;
    end
    $$
  `.execute(db);
  for (const [table, ignored] of Object.entries(VERSIONED)) {
    await db.schema
      .alterTable(table)
      .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
      .execute();
    const args = sql.join(["version", ...ignored].map((column) => sql.lit(column)));
    await sql`
      create trigger bump_version before update on ${sql.table(table)}
      for each row execute function flowplane_bump_version(${args})
    `.execute(db);
  }
  await sql`
    create function flowplane_bump_group_version() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        update device_groups set version = version + 1 where id = old.group_id;
        return old;
      end if;
      if new.group_id is distinct from old.group_id then
        update device_groups set version = version + 1 where id in (old.group_id, new.group_id);
      end if;
      return new;
    end
    $$
  `.execute(db);
  await sql`
    create trigger bump_group_version after update of group_id or delete on devices
    for each row execute function flowplane_bump_group_version()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists bump_group_version on devices`.execute(db);
  await sql`drop function if exists flowplane_bump_group_version()`.execute(db);
  for (const table of Object.keys(VERSIONED)) {
    await sql`drop trigger if exists bump_version on ${sql.table(table)}`.execute(db);
    await db.schema.alterTable(table).dropColumn("version").execute();
  }
  await sql`drop function if exists flowplane_bump_version()`.execute(db);
}
