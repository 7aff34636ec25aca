// The platform's catalogue (FlowFuse's `/project-types`, `/stacks` and `/templates`): everyone may
// list and read it; administrators create, change and delete its entries. Instances reference one
// of each, so an entry an instance uses cannot be deleted (make it inactive instead).
import {
  CreateInstanceTypeInput,
  CreateStackInput,
  CreateTemplateInput,
  InstanceType,
  InstanceTypeIdInput,
  InstanceTypeList,
  ListInstanceTypesInput,
  ListStacksInput,
  ListTemplatesInput,
  Stack,
  StackIdInput,
  StackList,
  Status,
  Template,
  TemplateIdInput,
  TemplateList,
  type TemplateSummary,
  UpdateInstanceTypeInput,
  UpdateStackInput,
  UpdateTemplateInput,
} from "@flowplane/contract";
import {
  deleteProjectType,
  deleteStack,
  deleteTemplate,
  findProjectType,
  findProjectTypeDetail,
  findStack,
  findStackDetail,
  findTemplate,
  findTemplateDetail,
  insertProjectType,
  insertStack,
  insertTemplate,
  isForeignKeyViolation,
  isUniqueViolation,
  listProjectTypes,
  listStacks,
  listTemplates,
  lockProjectType,
  lockStack,
  type ProjectStackDetail,
  type ProjectTemplateDetail,
  type ProjectTypeDetail,
  projectTypeUsage,
  recordAudit,
  replaceStack,
  stackInstanceCount,
  templateInstanceCount,
  updateProjectType,
  updateStack,
  updateTemplate,
} from "@flowplane/db";
import { ApiError, type FieldError, invalidRequest, notFound } from "../errors";
import { actorOf, type Context, procedure, router } from "../trpc";

// ---- Views ----

const iso = (date: Date) => date.toISOString();

export function instanceTypeView(row: ProjectTypeDetail): InstanceType {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    description: row.description,
    order: row.order,
    properties: row.properties,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    defaultStack: row.default_stack_id,
    instanceCount: row.instance_count,
    stackCount: row.stack_count,
  };
}

export function stackView(row: ProjectStackDetail, baseUrl: string): Stack {
  return {
    id: row.id,
    name: row.name,
    label: row.label,
    active: row.active,
    projectType: row.project_type_id,
    properties: row.properties,
    replacedBy: row.replaced_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    instanceCount: row.instance_count,
    links: { self: `${baseUrl}/api/v1/stacks/${row.id}` },
  };
}

export function templateSummaryView(row: ProjectTemplateDetail, baseUrl: string): TemplateSummary {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    active: row.active,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    instanceCount: row.instance_count,
    links: { self: `${baseUrl}/api/v1/templates/${row.id}` },
  };
}

type StoredEnvVar = { name: string; value: string; hidden?: boolean };

const envOf = (settings: Record<string, unknown>): StoredEnvVar[] =>
  Array.isArray(settings.env) ? (settings.env as StoredEnvVar[]) : [];

/** Hidden values are never shown: an empty string instead. */
export function templateView(row: ProjectTemplateDetail, baseUrl: string): Template {
  const settings = Array.isArray(row.settings.env)
    ? {
        ...row.settings,
        env: envOf(row.settings).map((v) => (v.hidden ? { ...v, value: "" } : v)),
      }
    : row.settings;
  return {
    ...templateSummaryView(row, baseUrl),
    settings,
    policy: row.policy,
  };
}

// ---- Shared ----

const nameTaken = (what: string) =>
  new ApiError(409, "invalid_name", `${what} with this name already exists`, [
    { path: "name", message: "Already in use" },
  ]);

const invalidStack = (message: string, fields?: FieldError[]) =>
  new ApiError(400, "invalid_stack", message, fields);

/** An entry in use cannot be deleted (nor, for a stack, have its properties changed). */
function inUse(what: string, uses: [number | undefined, string][], action = "deleted"): ApiError {
  const counted = uses
    .filter(([n]) => n === undefined || n > 0)
    .map(([n, noun]) => (n === undefined ? `${noun}s` : `${n} ${noun}${n === 1 ? "" : "s"}`));
  return invalidRequest(
    `${what} is in use by ${counted.join(" and ")}: it can only be ${action} unused`,
  );
}

/** Key order aside (jsonb keeps its own), the same JSON value. */
function same(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
          )
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The fields of `change` that differ from `before` (read through `column`), as audit updates. */
function changes<T extends Record<string, unknown>>(
  change: T,
  before: (key: keyof T & string) => unknown,
): { key: keyof T & string; old: unknown; new: unknown }[] {
  return (Object.keys(change) as (keyof T & string)[])
    .filter((key) => change[key] !== undefined && !same(change[key], before(key)))
    .map((key) => ({ key, old: before(key), new: change[key] }));
}

function nothingToChange(fields: string) {
  return invalidRequest("Nothing to change: give at least one field", [
    { path: "", message: `Give ${fields}` },
  ]);
}

const summary = (row: { id: string; name: string }) => ({ id: row.id, name: row.name });
const PLATFORM = { type: "platform", id: null } as const;

async function audit(
  trx: Context["db"],
  ctx: Context,
  event: string,
  body: Record<string, unknown>,
): Promise<void> {
  await recordAudit(trx, { event, entity: PLATFORM, actor: actorOf(ctx), body });
}

// ---- Instance types ----

const TYPES_TAG = "Instance Types";
const TYPE_AUDIT = "Logged in the platform's log as `platform.project-type.";

/** A default stack must exist and belong to the type or to none. */
async function checkDefaultStack(db: Context["db"], stackId: string, typeId: string | undefined) {
  const stack = await findStack(db, stackId);
  const fields = (message: string) => [{ path: "defaultStack", message }];
  if (!stack) throw invalidStack("No such stack", fields("No such stack"));
  if (stack.project_type_id !== null && stack.project_type_id !== typeId) {
    throw invalidStack(
      "The default stack must belong to the instance type, or to none",
      fields("A stack of another instance type"),
    );
  }
}

export const projectTypesRouter = router({
  all: procedure
    .meta({
      permission: "project-type:list",
      openapi: {
        method: "GET",
        path: "/api/v1/project-types",
        tags: [TYPES_TAG],
        summary: "Instance types, by ascending order",
        description: "Any signed-in caller. `filter` is `active` (default), `inactive` or `all`.",
      },
    })
    .input(ListInstanceTypesInput)
    .output(InstanceTypeList)
    .query(async ({ ctx, input }) => {
      const page = await listProjectTypes(ctx.db, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        types: page.types.map(instanceTypeView),
      };
    }),

  byId: procedure
    .meta({
      permission: "project-type:read",
      openapi: {
        method: "GET",
        path: "/api/v1/project-types/{instanceTypeId}",
        tags: [TYPES_TAG],
        summary: "One instance type",
      },
    })
    .input(InstanceTypeIdInput)
    .output(InstanceType)
    .query(async ({ ctx, input }) => {
      const row = await findProjectTypeDetail(ctx.db, input.instanceTypeId);
      if (!row) throw notFound();
      return instanceTypeView(row);
    }),

  create: procedure
    .meta({
      permission: "project-type:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/project-types",
        tags: [TYPES_TAG],
        summary: "Create an instance type (administrators)",
        description: `Names are unique without regard to case: a taken one is 409 \`invalid_name\`. \`properties\` holds free-form limits and settings. \`defaultStack\` must be a stack of no type (400 \`invalid_stack\` otherwise). ${TYPE_AUDIT}created\`.`,
      },
    })
    .input(CreateInstanceTypeInput)
    .output(InstanceType)
    .mutation(async ({ ctx, input }) => {
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          if (input.defaultStack) await checkDefaultStack(trx, input.defaultStack, undefined);
          const row = await insertProjectType(trx, input);
          await audit(trx, ctx, "platform.project-type.created", { projectType: summary(row) });
          return row;
        });
        return instanceTypeView({ ...row, instance_count: 0, stack_count: 0 });
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("An instance type");
        // The default stack was deleted meanwhile.
        if (isForeignKeyViolation(error)) {
          throw invalidStack("No such stack", [{ path: "defaultStack", message: "No such stack" }]);
        }
        throw error;
      }
    }),

  update: procedure
    .meta({
      permission: "project-type:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/project-types/{instanceTypeId}",
        tags: [TYPES_TAG],
        summary: "Change an instance type (administrators)",
        description: `Changes the fields given (at least one); \`properties\` is replaced as a whole. A taken name is 409 \`invalid_name\`; a \`defaultStack\` of another type is 400 \`invalid_stack\`. ${TYPE_AUDIT}updated\`.`,
      },
    })
    .input(UpdateInstanceTypeInput)
    .output(InstanceType)
    .mutation(async ({ ctx, input }) => {
      const { instanceTypeId, ...change } = input;
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const before = await findProjectType(trx, instanceTypeId);
          if (!before) throw notFound();
          if (Object.values(change).every((value) => value === undefined)) {
            throw nothingToChange("name, description, active, order, properties or defaultStack");
          }
          if (change.defaultStack) {
            await checkDefaultStack(trx, change.defaultStack, instanceTypeId);
          }
          const updates = changes(change, (key) =>
            key === "defaultStack" ? before.default_stack_id : before[key],
          );
          if (updates.length > 0) {
            const after = await updateProjectType(trx, instanceTypeId, change);
            if (!after) throw notFound();
            await audit(trx, ctx, "platform.project-type.updated", {
              projectType: summary(after),
              updates,
            });
          }
          return findProjectTypeDetail(trx, instanceTypeId);
        });
        if (!row) throw notFound();
        return instanceTypeView(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("An instance type");
        if (isForeignKeyViolation(error)) {
          throw invalidStack("No such stack", [{ path: "defaultStack", message: "No such stack" }]);
        }
        throw error;
      }
    }),

  delete: procedure
    .meta({
      permission: "project-type:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/project-types/{instanceTypeId}",
        tags: [TYPES_TAG],
        summary: "Delete an instance type (administrators)",
        description: `Only a type no instance and no stack has: otherwise 400 \`invalid_request\` (make it inactive so no new instance chooses it). ${TYPE_AUDIT}deleted\`.`,
      },
    })
    .input(InstanceTypeIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const what = "The instance type";
      try {
        await ctx.db.transaction().execute(async (trx) => {
          const type = await lockProjectType(trx, input.instanceTypeId);
          if (!type) throw notFound();
          const usage = await projectTypeUsage(trx, type.id);
          if (usage.instances > 0 || usage.stacks > 0) {
            throw inUse(what, [
              [usage.instances, "instance"],
              [usage.stacks, "stack"],
            ]);
          }
          if (!(await deleteProjectType(trx, type.id))) throw notFound();
          await audit(trx, ctx, "platform.project-type.deleted", { projectType: summary(type) });
        });
      } catch (error) {
        // An instance given the type while this ran: the reference refuses the delete.
        if (isForeignKeyViolation(error)) throw inUse(what, [[undefined, "instance"]]);
        throw error;
      }
      return { status: "okay" as const };
    }),
});

// ---- Stacks ----

const STACKS_TAG = "Stacks";
const STACK_AUDIT = "Logged in the platform's log as `platform.stack.";

/** A stack's instance type must exist. */
async function checkProjectType(db: Context["db"], typeId: string) {
  if (!(await findProjectType(db, typeId))) {
    throw invalidStack("No such instance type", [
      { path: "projectType", message: "No such instance type" },
    ]);
  }
}

export const stacksRouter = router({
  all: procedure
    .meta({
      permission: "stack:list",
      openapi: {
        method: "GET",
        path: "/api/v1/stacks",
        tags: [STACKS_TAG],
        summary: "Stacks, by name",
        description:
          "Any signed-in caller. `filter` is `active` (default), `inactive` or `all`; `projectType` keeps one instance type's stacks.",
      },
    })
    .input(ListStacksInput)
    .output(StackList)
    .query(async ({ ctx, input }) => {
      const page = await listStacks(ctx.db, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        stacks: page.stacks.map((row) => stackView(row, ctx.baseUrl)),
      };
    }),

  byId: procedure
    .meta({
      permission: "stack:read",
      openapi: {
        method: "GET",
        path: "/api/v1/stacks/{stackId}",
        tags: [STACKS_TAG],
        summary: "One stack",
      },
    })
    .input(StackIdInput)
    .output(Stack)
    .query(async ({ ctx, input }) => {
      const row = await findStackDetail(ctx.db, input.stackId);
      if (!row) throw notFound();
      return stackView(row, ctx.baseUrl);
    }),

  create: procedure
    .meta({
      permission: "stack:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/stacks",
        tags: [STACKS_TAG],
        summary: "Create a stack (administrators)",
        description: `\`properties.nodered\` is the Node-RED version its instances run. Names (lower-case letters, digits, '.', '-', '_') are unique without regard to case: a taken one is 409 \`invalid_name\`. With \`replaces\`, that stack becomes inactive with \`replacedBy\` this one, and the types whose default it was get this one; the new stack belongs to its instance type unless \`projectType\` says otherwise. An unknown \`projectType\` or \`replaces\`, or a stack already replaced, is 400 \`invalid_stack\`. ${STACK_AUDIT}created\`.`,
      },
    })
    .input(CreateStackInput)
    .output(Stack)
    .mutation(async ({ ctx, input }) => {
      const { replaces, ...values } = input;
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const old = replaces === undefined ? undefined : await lockStack(trx, replaces);
          if (replaces !== undefined) {
            if (!old) {
              throw invalidStack("No such stack to replace", [
                { path: "replaces", message: "No such stack" },
              ]);
            }
            if (old.replaced_by !== null) {
              throw invalidStack("The stack has already been replaced", [
                { path: "replaces", message: `Already replaced by ${old.replaced_by}` },
              ]);
            }
          }
          const projectType =
            values.projectType === undefined ? (old?.project_type_id ?? null) : values.projectType;
          if (projectType !== null) await checkProjectType(trx, projectType);
          const row = await insertStack(trx, { ...values, projectType });
          if (old) await replaceStack(trx, old.id, row.id);
          await audit(trx, ctx, "platform.stack.created", {
            stack: summary(row),
            ...(old ? { replaces: summary(old) } : {}),
          });
          return row;
        });
        return stackView({ ...row, instance_count: 0 }, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("A stack");
        // The instance type was deleted meanwhile.
        if (isForeignKeyViolation(error)) {
          throw invalidStack("No such instance type", [
            { path: "projectType", message: "No such instance type" },
          ]);
        }
        throw error;
      }
    }),

  update: procedure
    .meta({
      permission: "stack:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/stacks/{stackId}",
        tags: [STACKS_TAG],
        summary: "Change a stack (administrators)",
        description: `Changes the fields given (at least one). \`properties\` is replaced as a whole, and only while no instance uses the stack (400 \`invalid_request\`: create a stack that replaces it instead). A taken name is 409 \`invalid_name\`; an unknown \`projectType\` 400 \`invalid_stack\`. A stack moved to another type stops being the default of its old one. ${STACK_AUDIT}updated\`.`,
      },
    })
    .input(UpdateStackInput)
    .output(Stack)
    .mutation(async ({ ctx, input }) => {
      const { stackId, ...change } = input;
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const before = await lockStack(trx, stackId);
          if (!before) throw notFound();
          if (Object.values(change).every((value) => value === undefined)) {
            throw nothingToChange("name, label, active, projectType or properties");
          }
          if (change.projectType) await checkProjectType(trx, change.projectType);
          const updates = changes(change, (key) =>
            key === "projectType" ? before.project_type_id : before[key],
          );
          if (updates.some((u) => u.key === "properties")) {
            const instances = await stackInstanceCount(trx, stackId);
            if (instances > 0) {
              throw inUse("The stack", [[instances, "instance"]], "changed (its properties)");
            }
          }
          if (updates.length > 0) {
            const after = await updateStack(trx, stackId, change);
            if (!after) throw notFound();
            await audit(trx, ctx, "platform.stack.updated", { stack: summary(after), updates });
          }
          return findStackDetail(trx, stackId);
        });
        if (!row) throw notFound();
        return stackView(row, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("A stack");
        if (isForeignKeyViolation(error)) {
          throw invalidStack("No such instance type", [
            { path: "projectType", message: "No such instance type" },
          ]);
        }
        throw error;
      }
    }),

  delete: procedure
    .meta({
      permission: "stack:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/stacks/{stackId}",
        tags: [STACKS_TAG],
        summary: "Delete a stack (administrators)",
        description: `Only a stack no instance runs: otherwise 400 \`invalid_request\` (make it inactive, or create a stack that replaces it). Types whose default it was have none after. ${STACK_AUDIT}deleted\`.`,
      },
    })
    .input(StackIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      try {
        await ctx.db.transaction().execute(async (trx) => {
          const stack = await lockStack(trx, input.stackId);
          if (!stack) throw notFound();
          const instances = await stackInstanceCount(trx, stack.id);
          if (instances > 0) throw inUse("The stack", [[instances, "instance"]]);
          if (!(await deleteStack(trx, stack.id))) throw notFound();
          await audit(trx, ctx, "platform.stack.deleted", { stack: summary(stack) });
        });
      } catch (error) {
        if (isForeignKeyViolation(error)) throw inUse("The stack", [[undefined, "instance"]]);
        throw error;
      }
      return { status: "okay" as const };
    }),
});

// ---- Templates ----

const TEMPLATES_TAG = "Templates";
const TEMPLATE_AUDIT =
  "FlowFuse logs no event of its own for templates; this one is logged in the platform's log as `platform.template.";

/** A hidden variable written with an empty value keeps the value it had (hidden values are never shown). */
function keepHiddenValues(
  settings: Record<string, unknown>,
  before: Record<string, unknown>,
): Record<string, unknown> {
  if (!Array.isArray(settings.env)) return settings;
  const old = new Map(envOf(before).map((v) => [v.name, v]));
  return {
    ...settings,
    env: envOf(settings).map((v) => {
      const was = old.get(v.name);
      return v.hidden && v.value === "" && was?.hidden ? { ...v, value: was.value } : v;
    }),
  };
}

/** Settings may hold secrets (hidden variables): the log names the change, not the values. */
function templateUpdates(updates: { key: string; old: unknown; new: unknown }[]) {
  return updates.map((u) => (u.key === "settings" ? { key: u.key } : u));
}

export const templatesRouter = router({
  all: procedure
    .meta({
      permission: "template:list",
      openapi: {
        method: "GET",
        path: "/api/v1/templates",
        tags: [TEMPLATES_TAG],
        summary: "Templates, by name",
        description: "Any signed-in caller; active and inactive alike.",
      },
    })
    .input(ListTemplatesInput)
    .output(TemplateList)
    .query(async ({ ctx, input }) => {
      const page = await listTemplates(ctx.db, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        templates: page.templates.map((row) => templateSummaryView(row, ctx.baseUrl)),
      };
    }),

  byId: procedure
    .meta({
      permission: "template:read",
      openapi: {
        method: "GET",
        path: "/api/v1/templates/{templateId}",
        tags: [TEMPLATES_TAG],
        summary: "One template, with its settings and policy",
        description: "Hidden variables of `settings.env` have an empty value.",
      },
    })
    .input(TemplateIdInput)
    .output(Template)
    .query(async ({ ctx, input }) => {
      const row = await findTemplateDetail(ctx.db, input.templateId);
      if (!row) throw notFound();
      return templateView(row, ctx.baseUrl);
    }),

  create: procedure
    .meta({
      permission: "template:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/templates",
        tags: [TEMPLATES_TAG],
        summary: "Create a template (administrators)",
        description: `\`settings\` holds the defaults of new instances (\`env\`: variables, not \`FF_*\`, which are the platform's) and \`policy\` what their users may change; both are otherwise free-form. Names are unique without regard to case: a taken one is 409 \`invalid_name\`. ${TEMPLATE_AUDIT}created\`.`,
      },
    })
    .input(CreateTemplateInput)
    .output(Template)
    .mutation(async ({ ctx, input }) => {
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const row = await insertTemplate(trx, input);
          await audit(trx, ctx, "platform.template.created", { template: summary(row) });
          return row;
        });
        return templateView({ ...row, instance_count: 0 }, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("A template");
        throw error;
      }
    }),

  update: procedure
    .meta({
      permission: "template:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/templates/{templateId}",
        tags: [TEMPLATES_TAG],
        summary: "Change a template (administrators)",
        description: `Changes the fields given (at least one); \`settings\` and \`policy\` are replaced as a whole (a hidden variable given with an empty value keeps its value), and apply to instances created after. A taken name is 409 \`invalid_name\`. ${TEMPLATE_AUDIT}updated\`.`,
      },
    })
    .input(UpdateTemplateInput)
    .output(Template)
    .mutation(async ({ ctx, input }) => {
      const { templateId, ...given } = input;
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const before = await findTemplate(trx, templateId);
          if (!before) throw notFound();
          if (Object.values(given).every((value) => value === undefined)) {
            throw nothingToChange("name, description, active, settings or policy");
          }
          const change = {
            ...given,
            ...(given.settings
              ? { settings: keepHiddenValues(given.settings, before.settings) }
              : {}),
          };
          const updates = changes(change, (key) => before[key]);
          if (updates.length > 0) {
            const after = await updateTemplate(trx, templateId, change);
            if (!after) throw notFound();
            await audit(trx, ctx, "platform.template.updated", {
              template: summary(after),
              updates: templateUpdates(updates),
            });
          }
          return findTemplateDetail(trx, templateId);
        });
        if (!row) throw notFound();
        return templateView(row, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken("A template");
        throw error;
      }
    }),

  delete: procedure
    .meta({
      permission: "template:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/templates/{templateId}",
        tags: [TEMPLATES_TAG],
        summary: "Delete a template (administrators)",
        description: `Only a template no instance was made from: otherwise 400 \`invalid_request\` (make it inactive instead). ${TEMPLATE_AUDIT}deleted\`.`,
      },
    })
    .input(TemplateIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      try {
        await ctx.db.transaction().execute(async (trx) => {
          const template = await findTemplate(trx, input.templateId);
          if (!template) throw notFound();
          const instances = await templateInstanceCount(trx, template.id);
          if (instances > 0) throw inUse("The template", [[instances, "instance"]]);
          if (!(await deleteTemplate(trx, template.id))) throw notFound();
          await audit(trx, ctx, "platform.template.deleted", { template: summary(template) });
        });
      } catch (error) {
        if (isForeignKeyViolation(error)) throw inUse("The template", [[undefined, "instance"]]);
        throw error;
      }
      return { status: "okay" as const };
    }),
});
