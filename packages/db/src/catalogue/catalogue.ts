// The platform's catalogue: instance types (`project_types`), stacks (`project_stacks`, each naming
// a Node-RED version) and templates (`project_templates`, an instance's default settings and
// policy). Administrators keep them; instances reference one of each (ON DELETE RESTRICT). Each is
// a table of entries (entries.ts); what follows is what differs between them.
import { type Kysely, sql } from "kysely";
import { type ActiveFilter, entryTable } from "../entries";
import { type PageRequest } from "../paging";
import { countWhere } from "../rows";
import type { Database, ProjectStackRow, ProjectTemplateRow, ProjectTypeRow } from "../schema";

export type CatalogueFilter = ActiveFilter;

/** How many rows of `table` reference the entry in `column`. */
const usedBy = (table: string, column: string, entry: string, alias: string) =>
  sql<number>`(select count(*)::int from ${sql.table(table)} u where ${sql.ref(`u.${column}`)} = ${sql.ref(`${entry}.id`)})`.as(
    alias,
  );

// ---- Instance types ----

/** An instance type with how many instances and stacks have it. */
export interface ProjectTypeDetail extends ProjectTypeRow {
  instance_count: number;
  stack_count: number;
}

const projectTypes = entryTable<"project_types", ProjectTypeDetail>("project_types", {
  order: "order",
  json: ["properties"],
  counts: [
    usedBy("projects", "project_type_id", "project_types", "instance_count"),
    usedBy("project_stacks", "project_type_id", "project_types", "stack_count"),
  ],
});

/** Instance types by ascending `order` (then id), a page at a time; `cursor` is the last id seen. */
export const listProjectTypes = (
  db: Kysely<Database>,
  request: PageRequest & { filter: CatalogueFilter },
) => projectTypes.list(db, request);

export const findProjectType = projectTypes.find;
export const findProjectTypeDetail = projectTypes.findDetail;
/**
 * The instance type, its row locked until the transaction ends: a stack or an instance given the
 * type meanwhile waits, so a delete cannot miss it.
 */
export const lockProjectType = projectTypes.lock;

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
  { defaultStack, ...type }: ProjectTypeValues,
): Promise<ProjectTypeRow> {
  return projectTypes.insert(trx, { ...type, default_stack_id: defaultStack });
}

export async function updateProjectType(
  trx: Kysely<Database>,
  id: string,
  { defaultStack, ...change }: Partial<ProjectTypeValues>,
): Promise<ProjectTypeRow | undefined> {
  return projectTypes.update(trx, id, { ...change, default_stack_id: defaultStack });
}

/** How many instances and how many stacks have the type. */
export async function projectTypeUsage(
  db: Kysely<Database>,
  id: string,
): Promise<{ instances: number; stacks: number }> {
  const [instances, stacks] = await Promise.all([
    countWhere(db, "projects", "project_type_id", id),
    countWhere(db, "project_stacks", "project_type_id", id),
  ]);
  return { instances, stacks };
}

/**
 * Deletes the type. An instance that has it makes this fail with a foreign-key violation (ON
 * DELETE RESTRICT), also when it was created concurrently.
 */
export const deleteProjectType = projectTypes.delete;

// ---- Stacks ----

/** A stack with how many instances run it. */
export interface ProjectStackDetail extends ProjectStackRow {
  instance_count: number;
}

const stacks = entryTable<"project_stacks", ProjectStackDetail>("project_stacks", {
  order: "name",
  json: ["properties"],
  counts: [usedBy("projects", "stack_id", "project_stacks", "instance_count")],
});

/** Stacks by name (then id), a page at a time; `cursor` is the last id seen. */
export const listStacks = (
  db: Kysely<Database>,
  request: PageRequest & { filter: CatalogueFilter; projectType?: string },
) => stacks.list(db, request, { project_type_id: request.projectType });

export const findStack = stacks.find;
export const findStackDetail = stacks.findDetail;
/** The stack, its row locked until the transaction ends (a replacement or a delete holds it). */
export const lockStack = stacks.lock;

export interface StackValues {
  name: string;
  label?: string | null;
  active?: boolean;
  projectType?: string | null;
  properties: Record<string, unknown>;
}

export async function insertStack(
  trx: Kysely<Database>,
  { projectType, ...stack }: StackValues,
): Promise<ProjectStackRow> {
  return stacks.insert(trx, { ...stack, project_type_id: projectType });
}

/**
 * Changes the stack. A stack moved to another type (or to none) stops being the default of the
 * types it no longer belongs to.
 */
export async function updateStack(
  trx: Kysely<Database>,
  id: string,
  { projectType, ...change }: Partial<StackValues>,
): Promise<ProjectStackRow | undefined> {
  const row = await stacks.update(trx, id, { ...change, project_type_id: projectType });
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
  await stacks.update(trx, old, { replaced_by: by, active: false });
  await trx
    .updateTable("project_types")
    .set({ default_stack_id: by, updated_at: sql`now()` })
    .where("default_stack_id", "=", old)
    .execute();
}

/** How many instances run the stack. */
export async function stackInstanceCount(db: Kysely<Database>, id: string): Promise<number> {
  return countWhere(db, "projects", "stack_id", id);
}

/**
 * Deletes the stack (types whose default it was have none; stacks it replaced keep no
 * `replaced_by`). An instance that runs it makes this fail with a foreign-key violation.
 */
export const deleteStack = stacks.delete;

// ---- Templates ----

/** A template with how many instances were made from it. */
export interface ProjectTemplateDetail extends ProjectTemplateRow {
  instance_count: number;
}

const templates = entryTable<"project_templates", ProjectTemplateDetail, TemplateValues>(
  "project_templates",
  {
    order: "name",
    json: ["settings", "policy"],
    counts: [usedBy("projects", "template_id", "project_templates", "instance_count")],
  },
);

/** Templates by name (then id), a page at a time; `cursor` is the last id seen. */
export const listTemplates = (db: Kysely<Database>, request: PageRequest) =>
  templates.list(db, request);

export const findTemplate = templates.find;
export const findTemplateDetail = templates.findDetail;

export interface TemplateValues {
  name: string;
  description?: string | null;
  active?: boolean;
  settings: Record<string, unknown>;
  policy: Record<string, unknown>;
}

export const insertTemplate = templates.insert;
export const updateTemplate = templates.update;

/** How many instances were made from the template. */
export async function templateInstanceCount(db: Kysely<Database>, id: string): Promise<number> {
  return countWhere(db, "projects", "template_id", id);
}

/** Deletes the template; an instance made from it makes this fail (foreign-key violation). */
export const deleteTemplate = templates.delete;

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
    projectTypes.firstActive(db, ["order", "created_at"]),
    templates.firstActive(db, ["name"]),
  ]);
  let stack: ProjectStackRow | undefined;
  if (projectType) {
    const defaultStack = projectType.default_stack_id
      ? await findStack(db, projectType.default_stack_id)
      : undefined;
    stack = defaultStack?.active
      ? defaultStack
      : await stacks.firstActive(db, ["name"], { project_type_id: projectType.id });
  }
  return { projectType, stack, template };
}
