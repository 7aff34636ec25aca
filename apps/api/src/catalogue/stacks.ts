// Stacks: what an instance runs (`properties.nodered`, the Node-RED version a driver starts). A
// stack in use is not changed but replaced: a new stack `replaces` it.
import {
  CreateStackInput,
  ListStacksInput,
  Stack,
  StackIdInput,
  StackList,
  UpdateStackInput,
} from "@flowplane/contract";
import {
  type Db,
  deleteStack,
  findProjectType,
  findStackDetail,
  insertStack,
  listStacks,
  lockStack,
  type ProjectStackDetail,
  type ProjectStackRow,
  replaceStack,
  stackInstanceCount,
  updateStack,
} from "@flowplane/db";
import { type CatalogueKind, inUse, invalidStack, summary } from "./kind";

export function stackView(row: ProjectStackDetail, baseUrl: string): Stack {
  return {
    id: row.id,
    name: row.name,
    label: row.label,
    active: row.active,
    projectType: row.project_type_id,
    properties: row.properties,
    replacedBy: row.replaced_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    instanceCount: row.instance_count,
    links: { self: `${baseUrl}/api/v1/stacks/${row.id}` },
  };
}

const noSuchType = () =>
  invalidStack("No such instance type", [
    { path: "projectType", message: "No such instance type" },
  ]);

/** A stack's instance type must exist. */
async function checkProjectType(db: Db, typeId: string) {
  if (!(await findProjectType(db, typeId))) throw noSuchType();
}

/** The stack a new one replaces, locked; it must exist and not be replaced already. */
async function replaced(trx: Db, replaces: string | undefined) {
  if (replaces === undefined) return undefined;
  const old = await lockStack(trx, replaces);
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
  return old;
}

const AUDIT = "Logged in the platform's log as `platform.stack.";

const schemas = {
  list: ListStacksInput,
  listOutput: StackList,
  id: StackIdInput,
  view: Stack,
  create: CreateStackInput,
  update: UpdateStackInput,
};

export const stacks: CatalogueKind<ProjectStackRow, ProjectStackDetail, typeof schemas> = {
  path: "stacks",
  idField: "stackId",
  name: "stack",
  auditKey: "stack",
  noun: "stack",
  tag: "Stacks",
  docs: {
    all: {
      summary: "Stacks, by name",
      description:
        "Any signed-in caller. `filter` is `active` (default), `inactive` or `all`; `projectType` keeps one instance type's stacks.",
    },
    byId: { summary: "One stack" },
    create: {
      summary: "Create a stack (administrators)",
      description: `\`properties.nodered\` is the Node-RED version its instances run. Names (lower-case letters, digits, '.', '-', '_') are unique without regard to case: a taken one is 409 \`invalid_name\`. With \`replaces\`, that stack becomes inactive with \`replacedBy\` this one, and the types whose default it was get this one; the new stack belongs to its instance type unless \`projectType\` says otherwise. An unknown \`projectType\` or \`replaces\`, or a stack already replaced, is 400 \`invalid_stack\`. ${AUDIT}created\`.`,
    },
    update: {
      summary: "Change a stack (administrators)",
      description: `Changes the fields given (at least one). \`properties\` is replaced as a whole, and only while no instance uses the stack (400 \`invalid_request\`: create a stack that replaces it instead). A taken name is 409 \`invalid_name\`; an unknown \`projectType\` 400 \`invalid_stack\`. A stack moved to another type stops being the default of its old one. ${AUDIT}updated\`.`,
    },
    delete: {
      summary: "Delete a stack (administrators)",
      description: `Only a stack no instance runs: otherwise 400 \`invalid_request\` (make it inactive, or create a stack that replaces it). Types whose default it was have none after. ${AUDIT}deleted\`.`,
    },
  },
  schemas,

  list: listStacks,
  listOf: (page, stacks) => ({ ...page, stacks: stacks as Stack[] }),
  findDetail: findStackDetail,
  view: stackView,
  unused: (row) => ({ ...row, instance_count: 0 }),

  async insert(trx, input) {
    const { replaces, ...values } = input;
    const old = await replaced(trx, replaces);
    const projectType =
      values.projectType === undefined ? (old?.project_type_id ?? null) : values.projectType;
    if (projectType !== null) await checkProjectType(trx, projectType);
    const row = await insertStack(trx, { ...values, projectType });
    if (old) await replaceStack(trx, old.id, row.id);
    return { row, audit: old ? { replaces: summary(old) } : {} };
  },
  before: lockStack,
  fields: "name, label, active, projectType or properties",
  async prepare(trx, change) {
    if (change.projectType) await checkProjectType(trx, change.projectType);
    return change;
  },
  column: (before, key) =>
    key === "projectType" ? before.project_type_id : before[key as keyof ProjectStackRow],
  async checkUpdates(trx, updates, id) {
    if (!updates.some((u) => u.key === "properties")) return;
    const instances = await stackInstanceCount(trx, id);
    if (instances > 0) {
      throw inUse("The stack", [[instances, "instance"]], "changed (its properties)");
    }
  },
  update: updateStack,
  lock: lockStack,
  usage: async (trx, id) => [[await stackInstanceCount(trx, id), "instance"]],
  delete: deleteStack,
  // The instance type was deleted meanwhile.
  missingReference: noSuchType,
};
