// Applications and hosted instances: the platform's catalogue (instance types, stacks naming a
// Node-RED version, templates of default settings), applications within teams, instances within
// applications, and what each instance's Node-RED stores (flows, credentials, settings, sessions,
// library) — kept here, so that a process moved, restarted or re-created loses nothing.
import { type Kysely, sql } from "kysely";

/** The seeded catalogue's ids: fixed, so that every database (and every test) knows the defaults. */
export const DEFAULT_PROJECT_TYPE_ID = "ptype0000001";
export const DEFAULT_STACK_ID = "stack0000001";
export const DEFAULT_TEMPLATE_ID = "templ0000001";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("project_types")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("order", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("properties", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("default_stack_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("project_types_name_lower")
    .on("project_types")
    .unique()
    .expression(sql`lower(name)`)
    .execute();

  await db.schema
    .createTable("project_stacks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("label", "text")
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("project_type_id", "text", (c) =>
      c.references("project_types.id").onDelete("set null"),
    )
    /** `{ nodered: "4.1.15", … }`: the Node-RED version is what a driver runs. */
    .addColumn("properties", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("replaced_by", "text", (c) => c.references("project_stacks.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("project_stacks_name_lower")
    .on("project_stacks")
    .unique()
    .expression(sql`lower(name)`)
    .execute();
  await db.schema
    .alterTable("project_types")
    .addForeignKeyConstraint(
      "project_types_default_stack",
      ["default_stack_id"],
      "project_stacks",
      ["id"],
    )
    .onDelete("set null")
    .execute();

  await db.schema
    .createTable("project_templates")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("policy", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("project_templates_name_lower")
    .on("project_templates")
    .unique()
    .expression(sql`lower(name)`)
    .execute();

  await sql`insert into project_types (id, name, description, "order") values
    (${DEFAULT_PROJECT_TYPE_ID}, 'Default', 'The default instance type', 0)`.execute(db);
  await sql`insert into project_stacks (id, name, label, project_type_id, properties) values
    (${DEFAULT_STACK_ID}, 'node-red-4.1', 'Node-RED 4.1', ${DEFAULT_PROJECT_TYPE_ID},
     ${JSON.stringify({ nodered: "4.1.15" })}::jsonb)`.execute(db);
  await sql`update project_types set default_stack_id = ${DEFAULT_STACK_ID}
    where id = ${DEFAULT_PROJECT_TYPE_ID}`.execute(db);
  await sql`insert into project_templates (id, name, description, settings, policy) values
    (${DEFAULT_TEMPLATE_ID}, 'Default', 'The default template: Node-RED as it comes',
     '{}'::jsonb, '{}'::jsonb)`.execute(db);

  await db.schema
    .createTable("applications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("applications_team_name")
    .on("applications")
    .columns(["team_id", "name", "id"])
    .execute();

  await db.schema
    .createTable("projects")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.id").onDelete("no action"),
    )
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("project_type_id", "text", (c) =>
      c.notNull().references("project_types.id").onDelete("restrict"),
    )
    .addColumn("stack_id", "text", (c) =>
      c.notNull().references("project_stacks.id").onDelete("restrict"),
    )
    .addColumn("template_id", "text", (c) =>
      c.notNull().references("project_templates.id").onDelete("restrict"),
    )
    /** The desired state: running, stopped or suspended. */
    .addColumn("state", "text", (c) => c.notNull().defaultTo("running"))
    /** The action under way (starting, stopping, restarting, suspending), and since when. */
    .addColumn("in_flight", "text")
    .addColumn("in_flight_at", "timestamptz")
    /** `{ env: [{ name, value, hidden }] }` */
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    /** HMAC of the instance's token (`fpi_…`), a new one for every start of its Node-RED. */
    .addColumn("token_digest", "text", (c) => c.unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("projects_name_lower")
    .on("projects")
    .unique()
    .expression(sql`lower(name)`)
    .execute();
  await db.schema
    .createIndex("projects_application")
    .on("projects")
    .columns(["application_id", "name"])
    .execute();
  await db.schema.createIndex("projects_team").on("projects").column("team_id").execute();

  await db.schema
    .createTable("project_storage")
    .addColumn("project_id", "text", (c) =>
      c.primaryKey().references("projects.id").onDelete("cascade"),
    )
    .addColumn("flows", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    /** Node-RED's encrypted credentials object, as it hands it to its storage module. */
    .addColumn("credentials", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("sessions", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    /** `{ "<type>/<path>": { meta, body } }` */
    .addColumn("library", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("flows_updated_at", "timestamptz")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "project_storage",
    "projects",
    "applications",
    "project_templates",
    "project_types",
    "project_stacks",
  ]) {
    await sql`drop table if exists ${sql.table(table)} cascade`.execute(db);
  }
}
