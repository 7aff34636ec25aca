// Teams as people share them: team types (with the per-team limits later areas enforce), a type for
// every team, and invitations.
import { type Kysely, sql } from "kysely";

/** The seeded type's id: fixed, so that every database (and every test) knows the default. */
export const DEFAULT_TEAM_TYPE_ID = "starter00001";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("team_types")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("order", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("properties", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("team_types_name_lower")
    .on("team_types")
    .unique()
    .expression(sql`lower(name)`)
    .execute();
  await sql`insert into team_types (id, name, description, "order", properties) values (
    ${DEFAULT_TEAM_TYPE_ID}, 'Starter', 'The default team type: no limits set',
    0, ${JSON.stringify({
      users: { limit: null },
      instances: { limit: null },
      devices: { limit: null },
      teamBroker: { clients: { limit: null } },
    })}::jsonb)`.execute(db);

  await db.schema
    .alterTable("teams")
    .addColumn("type_id", "text", (c) =>
      c.notNull().defaultTo(DEFAULT_TEAM_TYPE_ID).references("team_types.id").onDelete("restrict"),
    )
    .execute();
  await db.schema.createIndex("teams_type_id").on("teams").column("type_id").execute();

  await db.schema
    .createTable("invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("invitor_id", "text", (c) => c.references("users.id").onDelete("set null"))
    /** An existing user; null when the invitation went to an email nobody has yet. */
    .addColumn("invitee_id", "text", (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("email", "text")
    .addColumn("role", "smallint", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("sent_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addCheckConstraint("invitations_invitee", sql`invitee_id is not null or email is not null`)
    .execute();
  await db.schema
    .createIndex("invitations_team_invitee")
    .on("invitations")
    .unique()
    .columns(["team_id", "invitee_id"])
    .where(sql.ref("invitee_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("invitations_team_email")
    .on("invitations")
    .unique()
    .expression(sql`team_id, lower(email)`)
    .where(sql.ref("email"), "is not", null)
    .execute();
  await db.schema
    .createIndex("invitations_invitee")
    .on("invitations")
    .column("invitee_id")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("invitations").ifExists().execute();
  await db.schema.alterTable("teams").dropColumn("type_id").execute();
  await db.schema.dropTable("team_types").ifExists().execute();
}
