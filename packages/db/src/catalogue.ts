// The platform's catalogue: instance types (`project_types`), stacks (`project_stacks`, each naming
// a Node-RED version) and templates (`project_templates`, an instance's default settings and
// policy). Administrators keep them; instances reference one of each (ON DELETE RESTRICT).
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, ProjectStackRow, ProjectTemplateRow, ProjectTypeRow } from "./schema";

export type CatalogueFilter = "active" | "inactive" | "all";

interface Page {
  limit: number;
  cursor?: string;
}

function paged<T extends { id: string }>(rows: T[], limit: number) {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { page, nextCursor: more ? page.at(-1)!.id : undefined };
}

const count = sql<number>`count(*)::int`.as("n");

// ---- Instance types ----

/** An instance type with how many instances and stacks have it. */
export interface ProjectTypeDetail extends ProjectTypeRow {
  instance_count: number;
  stack_count: number;
}

function projectTypesWithCounts(db: Kysely<Database>) {
  return db
    .selectFrom("project_types")
    .selectAll("project_types")
    .select([
      sql<number>`(select count(*)::int from projects p where p.project_type_id = project_types.id)`.as(
        "instance_count",
      ),
      sql<number>`(select count(*)::int from project_stacks s where s.project_type_id = project_types.id)`.as(
        "stack_count",
      ),
    ]);
}

/** Instance types by ascending `order` (then id), a page at a time; `cursor` is the last id seen. */
export async function listProjectTypes(
  db: Kysely<Database>,
  page: Page & { filter: CatalogueFilter },
): Promise<{ types: ProjectTypeDetail[]; total: number; nextCursor?: string }> {
  const active = page.filter === "all" ? undefined : page.filter === "active";
  let query = projectTypesWithCounts(db)
    .orderBy("project_types.order")
    .orderBy("project_types.id")
    .limit(page.limit + 1);
  let total = db.selectFrom("project_types").select(count);
  if (active !== undefined) {
    query = query.where("project_types.active", "=", active);
    total = total.where("active", "=", active);
  }
  if (page.cursor !== undefined) {
    query = query.where(
      sql<boolean>`(project_types."order", project_types.id) > (select c."order", c.id from project_types c where c.id = ${page.cursor})`,
    );
  }
  const [rows, n] = await Promise.all([query.execute(), total.executeTakeFirstOrThrow()]);
  const { page: types, nextCursor } = paged(rows, page.limit);
  return { types, total: n.n, nextCursor };
}

export async function findProjectType(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectTypeRow | undefined> {
  return db.selectFrom("project_types").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findProjectTypeDetail(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectTypeDetail | undefined> {
  return projectTypesWithCounts(db).where("project_types.id", "=", id).executeTakeFirst();
}

/**
 * The instance type, its row locked until the transaction ends: a stack or an instance given the
 * type meanwhile waits, so a delete cannot miss it.
 */
export async function lockProjectType(
  trx: Kysely<Database>,
  id: string,
): Promise<ProjectTypeRow | undefined> {
  return trx
    .selectFrom("project_types")
    .selectAll()
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
}

export interface ProjectTypeValues {
  name: string;
  description?: string | null;
  active?: boolean;
  order?: number;
  properties?: Record<string, unknown>;
  defaultStack?: string | null;
}

export async function insertProjectType(
  trx: Kysely<Database>,
  type: ProjectTypeValues,
): Promise<ProjectTypeRow> {
  return trx
    .insertInto("project_types")
    .values({
      id: newId(),
      name: type.name,
      description: type.description ?? null,
      active: type.active ?? true,
      order: type.order ?? 0,
      properties: JSON.stringify(type.properties ?? {}),
      default_stack_id: type.defaultStack ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateProjectType(
  trx: Kysely<Database>,
  id: string,
  change: Partial<ProjectTypeValues>,
): Promise<ProjectTypeRow | undefined> {
  const { properties, defaultStack, ...columns } = change;
  return trx
    .updateTable("project_types")
    .set({
      ...columns,
      ...(properties === undefined ? {} : { properties: JSON.stringify(properties) }),
      ...(defaultStack === undefined ? {} : { default_stack_id: defaultStack }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** How many instances and how many stacks have the type. */
export async function projectTypeUsage(
  db: Kysely<Database>,
  id: string,
): Promise<{ instances: number; stacks: number }> {
  const [instances, stacks] = await Promise.all([
    db
      .selectFrom("projects")
      .select(count)
      .where("project_type_id", "=", id)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("project_stacks")
      .select(count)
      .where("project_type_id", "=", id)
      .executeTakeFirstOrThrow(),
  ]);
  return { instances: instances.n, stacks: stacks.n };
}

/**
 * Deletes the type. An instance that has it makes this fail with a foreign-key violation (ON
 * DELETE RESTRICT), also when it was created concurrently.
 */
export async function deleteProjectType(
  trx: Kysely<Database>,
  id: string,
): Promise<ProjectTypeRow | undefined> {
  return trx.deleteFrom("project_types").where("id", "=", id).returningAll().executeTakeFirst();
}

// ---- Stacks ----

/** A stack with how many instances run it. */
export interface ProjectStackDetail extends ProjectStackRow {
  instance_count: number;
}

function stacksWithCounts(db: Kysely<Database>) {
  return db
    .selectFrom("project_stacks")
    .selectAll("project_stacks")
    .select(
      sql<number>`(select count(*)::int from projects p where p.stack_id = project_stacks.id)`.as(
        "instance_count",
      ),
    );
}

/** Stacks by name (then id), a page at a time; `cursor` is the last id seen. */
export async function listStacks(
  db: Kysely<Database>,
  page: Page & { filter: CatalogueFilter; projectType?: string },
): Promise<{ stacks: ProjectStackDetail[]; total: number; nextCursor?: string }> {
  const active = page.filter === "all" ? undefined : page.filter === "active";
  let query = stacksWithCounts(db)
    .orderBy("project_stacks.name")
    .orderBy("project_stacks.id")
    .limit(page.limit + 1);
  let total = db.selectFrom("project_stacks").select(count);
  if (active !== undefined) {
    query = query.where("project_stacks.active", "=", active);
    total = total.where("active", "=", active);
  }
  if (page.projectType !== undefined) {
    query = query.where("project_stacks.project_type_id", "=", page.projectType);
    total = total.where("project_type_id", "=", page.projectType);
  }
  if (page.cursor !== undefined) {
    query = query.where(
      sql<boolean>`(project_stacks.name, project_stacks.id) > (select c.name, c.id from project_stacks c where c.id = ${page.cursor})`,
    );
  }
  const [rows, n] = await Promise.all([query.execute(), total.executeTakeFirstOrThrow()]);
  const { page: stacks, nextCursor } = paged(rows, page.limit);
  return { stacks, total: n.n, nextCursor };
}

export async function findStack(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectStackRow | undefined> {
  return db.selectFrom("project_stacks").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findStackDetail(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectStackDetail | undefined> {
  return stacksWithCounts(db).where("project_stacks.id", "=", id).executeTakeFirst();
}

/** The stack, its row locked until the transaction ends (a replacement or a delete holds it). */
export async function lockStack(
  trx: Kysely<Database>,
  id: string,
): Promise<ProjectStackRow | undefined> {
  return trx
    .selectFrom("project_stacks")
    .selectAll()
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
}

export interface StackValues {
  name: string;
  label?: string | null;
  active?: boolean;
  projectType?: string | null;
  properties: Record<string, unknown>;
}

export async function insertStack(
  trx: Kysely<Database>,
  stack: StackValues,
): Promise<ProjectStackRow> {
  return trx
    .insertInto("project_stacks")
    .values({
      id: newId(),
      name: stack.name,
      label: stack.label ?? null,
      active: stack.active ?? true,
      project_type_id: stack.projectType ?? null,
      properties: JSON.stringify(stack.properties),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Changes the stack. A stack moved to another type (or to none) stops being the default of the
 * types it no longer belongs to.
 */
export async function updateStack(
  trx: Kysely<Database>,
  id: string,
  change: Partial<StackValues>,
): Promise<ProjectStackRow | undefined> {
  const { properties, projectType, ...columns } = change;
  const row = await trx
    .updateTable("project_stacks")
    .set({
      ...columns,
      ...(properties === undefined ? {} : { properties: JSON.stringify(properties) }),
      ...(projectType === undefined ? {} : { project_type_id: projectType }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  if (row && projectType !== undefined) {
    let others = trx
      .updateTable("project_types")
      .set({ default_stack_id: null, updated_at: sql`now()` })
      .where("default_stack_id", "=", id);
    if (projectType !== null) others = others.where("id", "<>", projectType);
    await others.execute();
  }
  return row;
}

/**
 * `old` is replaced by `by`: it becomes inactive with `replaced_by` set, and the types whose
 * default it was get `by` as their default.
 */
export async function replaceStack(trx: Kysely<Database>, old: string, by: string): Promise<void> {
  await trx
    .updateTable("project_stacks")
    .set({ replaced_by: by, active: false, updated_at: sql`now()` })
    .where("id", "=", old)
    .execute();
  await trx
    .updateTable("project_types")
    .set({ default_stack_id: by, updated_at: sql`now()` })
    .where("default_stack_id", "=", old)
    .execute();
}

/** How many instances run the stack. */
export async function stackInstanceCount(db: Kysely<Database>, id: string): Promise<number> {
  const row = await db
    .selectFrom("projects")
    .select(count)
    .where("stack_id", "=", id)
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * Deletes the stack (types whose default it was have none; stacks it replaced keep no
 * `replaced_by`). An instance that runs it makes this fail with a foreign-key violation.
 */
export async function deleteStack(
  trx: Kysely<Database>,
  id: string,
): Promise<ProjectStackRow | undefined> {
  return trx.deleteFrom("project_stacks").where("id", "=", id).returningAll().executeTakeFirst();
}

// ---- Templates ----

/** A template with how many instances were made from it. */
export interface ProjectTemplateDetail extends ProjectTemplateRow {
  instance_count: number;
}

function templatesWithCounts(db: Kysely<Database>) {
  return db
    .selectFrom("project_templates")
    .selectAll("project_templates")
    .select(
      sql<number>`(select count(*)::int from projects p where p.template_id = project_templates.id)`.as(
        "instance_count",
      ),
    );
}

/** Templates by name (then id), a page at a time; `cursor` is the last id seen. */
export async function listTemplates(
  db: Kysely<Database>,
  page: Page,
): Promise<{ templates: ProjectTemplateDetail[]; total: number; nextCursor?: string }> {
  let query = templatesWithCounts(db)
    .orderBy("project_templates.name")
    .orderBy("project_templates.id")
    .limit(page.limit + 1);
  if (page.cursor !== undefined) {
    query = query.where(
      sql<boolean>`(project_templates.name, project_templates.id) > (select c.name, c.id from project_templates c where c.id = ${page.cursor})`,
    );
  }
  const [rows, n] = await Promise.all([
    query.execute(),
    db.selectFrom("project_templates").select(count).executeTakeFirstOrThrow(),
  ]);
  const { page: templates, nextCursor } = paged(rows, page.limit);
  return { templates, total: n.n, nextCursor };
}

export async function findTemplate(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectTemplateRow | undefined> {
  return db.selectFrom("project_templates").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findTemplateDetail(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectTemplateDetail | undefined> {
  return templatesWithCounts(db).where("project_templates.id", "=", id).executeTakeFirst();
}

export interface TemplateValues {
  name: string;
  description?: string | null;
  active?: boolean;
  settings: Record<string, unknown>;
  policy: Record<string, unknown>;
}

export async function insertTemplate(
  trx: Kysely<Database>,
  template: TemplateValues,
): Promise<ProjectTemplateRow> {
  return trx
    .insertInto("project_templates")
    .values({
      id: newId(),
      name: template.name,
      description: template.description ?? null,
      active: template.active ?? true,
      settings: JSON.stringify(template.settings),
      policy: JSON.stringify(template.policy),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTemplate(
  trx: Kysely<Database>,
  id: string,
  change: Partial<TemplateValues>,
): Promise<ProjectTemplateRow | undefined> {
  const { settings, policy, ...columns } = change;
  return trx
    .updateTable("project_templates")
    .set({
      ...columns,
      ...(settings === undefined ? {} : { settings: JSON.stringify(settings) }),
      ...(policy === undefined ? {} : { policy: JSON.stringify(policy) }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** How many instances were made from the template. */
export async function templateInstanceCount(db: Kysely<Database>, id: string): Promise<number> {
  const row = await db
    .selectFrom("projects")
    .select(count)
    .where("template_id", "=", id)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Deletes the template; an instance made from it makes this fail (foreign-key violation). */
export async function deleteTemplate(
  trx: Kysely<Database>,
  id: string,
): Promise<ProjectTemplateRow | undefined> {
  return trx.deleteFrom("project_templates").where("id", "=", id).returningAll().executeTakeFirst();
}

// ---- What a new instance gets ----

/**
 * What a new instance gets when it names none: the active type with the lowest `order`, that
 * type's default stack (when active; else its first active stack by name), and the first active
 * template by name. Each is undefined when there is none.
 */
export async function defaultCatalogue(db: Kysely<Database>): Promise<{
  projectType?: ProjectTypeRow;
  stack?: ProjectStackRow;
  template?: ProjectTemplateRow;
}> {
  const [projectType, template] = await Promise.all([
    db
      .selectFrom("project_types")
      .selectAll()
      .where("active", "=", true)
      .orderBy("order")
      .orderBy("created_at")
      .orderBy("id")
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom("project_templates")
      .selectAll()
      .where("active", "=", true)
      .orderBy("name")
      .orderBy("id")
      .limit(1)
      .executeTakeFirst(),
  ]);
  let stack: ProjectStackRow | undefined;
  if (projectType) {
    const defaultStack = projectType.default_stack_id
      ? await findStack(db, projectType.default_stack_id)
      : undefined;
    stack = defaultStack?.active
      ? defaultStack
      : await db
          .selectFrom("project_stacks")
          .selectAll()
          .where("active", "=", true)
          .where("project_type_id", "=", projectType.id)
          .orderBy("name")
          .orderBy("id")
          .limit(1)
          .executeTakeFirst();
  }
  return { projectType, stack, template };
}
