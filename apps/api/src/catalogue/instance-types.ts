// Instance types (FlowFuse's project types): what an instance is sized and billed as; each may
// name a default stack for its new instances.
import {
  CreateInstanceTypeInput,
  InstanceType,
  InstanceTypeIdInput,
  InstanceTypeList,
  ListInstanceTypesInput,
  UpdateInstanceTypeInput,
} from "@flowplane/contract";
import {
  type Db,
  deleteProjectType,
  findProjectType,
  findProjectTypeDetail,
  findStack,
  insertProjectType,
  listProjectTypes,
  lockProjectType,
  type ProjectTypeDetail,
  type ProjectTypeRow,
  projectTypeUsage,
  updateProjectType,
} from "@flowplane/db";
import { type CatalogueKind, invalidStack } from "./kind";

export function instanceTypeView(row: ProjectTypeDetail): InstanceType {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    description: row.description,
    order: row.order,
    properties: row.properties,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    defaultStack: row.default_stack_id,
    instanceCount: row.instance_count,
    stackCount: row.stack_count,
  };
}

const noSuchStack = () =>
  invalidStack("No such stack", [{ path: "defaultStack", message: "No such stack" }]);

/** A default stack must exist and belong to the type or to none. */
async function checkDefaultStack(db: Db, stackId: string, typeId: string | undefined) {
  const stack = await findStack(db, stackId);
  if (!stack) throw noSuchStack();
  if (stack.project_type_id !== null && stack.project_type_id !== typeId) {
    throw invalidStack("The default stack must belong to the instance type, or to none", [
      { path: "defaultStack", message: "A stack of another instance type" },
    ]);
  }
}

const AUDIT = "Logged in the platform's log as `platform.project-type.";

const schemas = {
  list: ListInstanceTypesInput,
  listOutput: InstanceTypeList,
  id: InstanceTypeIdInput,
  view: InstanceType,
  create: CreateInstanceTypeInput,
  update: UpdateInstanceTypeInput,
};

export const instanceTypes: CatalogueKind<ProjectTypeRow, ProjectTypeDetail, typeof schemas> = {
  path: "project-types",
  idField: "instanceTypeId",
  name: "project-type",
  auditKey: "projectType",
  noun: "instance type",
  tag: "Instance Types",
  docs: {
    all: {
      summary: "Instance types, by ascending order",
      description: "Any signed-in caller. `filter` is `active` (default), `inactive` or `all`.",
    },
    byId: { summary: "One instance type" },
    create: {
      summary: "Create an instance type (administrators)",
      description: `Names are unique without regard to case: a taken one is 409 \`invalid_name\`. \`properties\` holds free-form limits and settings. \`defaultStack\` must be a stack of no type (400 \`invalid_stack\` otherwise). ${AUDIT}created\`.`,
    },
    update: {
      summary: "Change an instance type (administrators)",
      description: `Changes the fields given (at least one); \`properties\` is replaced as a whole. A taken name is 409 \`invalid_name\`; a \`defaultStack\` of another type is 400 \`invalid_stack\`. ${AUDIT}updated\`.`,
    },
    delete: {
      summary: "Delete an instance type (administrators)",
      description: `Only a type no instance and no stack has: otherwise 400 \`invalid_request\` (make it inactive so no new instance chooses it). ${AUDIT}deleted\`.`,
    },
  },
  schemas,

  list: listProjectTypes,
  listOf: (page, types) => ({ ...page, types: types as InstanceType[] }),
  findDetail: findProjectTypeDetail,
  view: instanceTypeView,
  unused: (row) => ({ ...row, instance_count: 0, stack_count: 0 }),

  async insert(trx, input) {
    if (input.defaultStack) await checkDefaultStack(trx, input.defaultStack, undefined);
    return { row: await insertProjectType(trx, input) };
  },
  before: findProjectType,
  fields: "name, description, active, order, properties or defaultStack",
  async prepare(trx, change, _before, id) {
    if (change.defaultStack) await checkDefaultStack(trx, change.defaultStack, id);
    return change;
  },
  column: (before, key) =>
    key === "defaultStack" ? before.default_stack_id : before[key as keyof ProjectTypeRow],
  update: updateProjectType,
  lock: lockProjectType,
  async usage(trx, id) {
    const usage = await projectTypeUsage(trx, id);
    return [
      [usage.instances, "instance"],
      [usage.stacks, "stack"],
    ];
  },
  delete: deleteProjectType,
  // The default stack was deleted meanwhile.
  missingReference: noSuchStack,
};
