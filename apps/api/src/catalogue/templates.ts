// Templates: the default settings (`env` variables among them) and policy of new instances.
// Hidden variables are never shown, and a hidden one written back blank keeps its value.
import {
  CreateTemplateInput,
  ListTemplatesInput,
  Template,
  TemplateIdInput,
  TemplateList,
  type TemplateSummary,
  UpdateTemplateInput,
} from "@flowplane/contract";
import {
  deleteTemplate,
  findTemplate,
  findTemplateDetail,
  insertTemplate,
  listTemplates,
  type ProjectTemplateDetail,
  type ProjectTemplateRow,
  templateInstanceCount,
  updateTemplate,
} from "@flowplane/db";
import type { CatalogueKind } from "./kind";

export function templateSummaryView(row: ProjectTemplateDetail, baseUrl: string): TemplateSummary {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
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

const AUDIT =
  "FlowFuse logs no event of its own for templates; this one is logged in the platform's log as `platform.template.";

const schemas = {
  list: ListTemplatesInput,
  listOutput: TemplateList,
  id: TemplateIdInput,
  view: Template,
  create: CreateTemplateInput,
  update: UpdateTemplateInput,
};

export const templates: CatalogueKind<ProjectTemplateRow, ProjectTemplateDetail, typeof schemas> = {
  path: "templates",
  idField: "templateId",
  name: "template",
  auditKey: "template",
  noun: "template",
  tag: "Templates",
  docs: {
    all: {
      summary: "Templates, by name",
      description: "Any signed-in caller; active and inactive alike.",
    },
    byId: {
      summary: "One template, with its settings and policy",
      description: "Hidden variables of `settings.env` have an empty value.",
    },
    create: {
      summary: "Create a template (administrators)",
      description: `\`settings\` holds the defaults of new instances (\`env\`: variables, not \`FF_*\`, which are the platform's) and \`policy\` what their users may change; both are otherwise free-form. Names are unique without regard to case: a taken one is 409 \`invalid_name\`. ${AUDIT}created\`.`,
    },
    update: {
      summary: "Change a template (administrators)",
      description: `Changes the fields given (at least one); \`settings\` and \`policy\` are replaced as a whole (a hidden variable given with an empty value keeps its value), and apply to instances created after. A taken name is 409 \`invalid_name\`. ${AUDIT}updated\`.`,
    },
    delete: {
      summary: "Delete a template (administrators)",
      description: `Only a template no instance was made from: otherwise 400 \`invalid_request\` (make it inactive instead). ${AUDIT}deleted\`.`,
    },
  },
  schemas,

  list: listTemplates,
  listOf: (page, templates) => ({ ...page, templates: templates as TemplateSummary[] }),
  findDetail: findTemplateDetail,
  view: templateView,
  summaryView: templateSummaryView,
  unused: (row) => ({ ...row, instance_count: 0 }),

  insert: async (trx, input) => ({ row: await insertTemplate(trx, input) }),
  before: findTemplate,
  fields: "name, description, active, settings or policy",
  prepare: async (_trx, change, before) =>
    change.settings
      ? { ...change, settings: keepHiddenValues(change.settings, before.settings) }
      : change,
  column: (before, key) => before[key as keyof ProjectTemplateRow],
  update: updateTemplate,
  // Settings may hold secrets (hidden variables): the log names the change, not the values.
  loggedUpdates: (updates) => updates.map((u) => (u.key === "settings" ? { key: u.key } : u)),
  lock: findTemplate,
  usage: async (trx, id) => [[await templateInstanceCount(trx, id), "instance"]],
  delete: deleteTemplate,
};
