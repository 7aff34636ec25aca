// The platform's catalogue: instance types (FlowFuse's project types), stacks (the Node-RED version
// an instance runs) and templates (an instance's default settings and what its users may change).
import { z } from "zod";
import { Id, Links, ListMeta, Name, PageInput, Text, Timestamp } from "./common";
import { EnvVar, EnvVarName } from "./instances";
import { checkStorableJson, eachNameOnce } from "./refinements";

/** How deep and how large a free-form object may be, and how many keys it may have at its top. */
const FREE_FORM = { depth: 8, bytes: 64 * 1024, keys: 100 };

/**
 * Checks a free-form JSON value: every key and string storable (PostgreSQL's jsonb refuses NUL
 * and lone surrogates), nesting and size bounded. Reports the first fault at its own path.
 */
function checkFreeForm(value: Record<string, unknown>, ctx: z.RefinementCtx) {
  if (Object.keys(value).length > FREE_FORM.keys) {
    ctx.addIssue({ code: "custom", message: `At most ${FREE_FORM.keys} keys` });
    return;
  }
  if (
    checkStorableJson(value, ctx, FREE_FORM.depth) &&
    JSON.stringify(value).length > FREE_FORM.bytes
  ) {
    ctx.addIssue({ code: "custom", message: `At most ${FREE_FORM.bytes} characters as JSON` });
  }
}

const FreeFormKey = Text.min(1).max(128);

/** A free-form JSON object, bounded (see FREE_FORM). */
export const freeForm = () => z.record(FreeFormKey, z.unknown()).superRefine(checkFreeForm);

const Order = z.number().int().min(0).max(1_000_000);
const Description = Text.max(1024).nullable();
const Count = z.number().int().min(0);

// ---- Instance types ----

export const InstanceTypeProperties = freeForm()
  .describe("Free-form limits and settings of the type's instances (at most 100 keys, 64 KiB)")
  .meta({ id: "InstanceTypeProperties" });
export type InstanceTypeProperties = z.infer<typeof InstanceTypeProperties>;

export const InstanceType = z
  .object({
    id: Id,
    name: z.string(),
    active: z.boolean().describe("Whether new instances may choose it"),
    description: z.string().nullable(),
    order: z.number().int().describe("Lists show types by ascending order"),
    properties: z.record(z.string(), z.unknown()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    defaultStack: Id.nullable().describe("The stack a new instance of the type gets by default"),
    instanceCount: Count,
    stackCount: Count,
  })
  .meta({ id: "InstanceType" });
export type InstanceType = z.infer<typeof InstanceType>;

export const InstanceTypeList = z
  .object({ meta: ListMeta, count: z.number().int(), types: z.array(InstanceType) })
  .meta({ id: "InstanceTypeList" });
export type InstanceTypeList = z.infer<typeof InstanceTypeList>;

export const InstanceTypeIdInput = z.strictObject({ instanceTypeId: Id });

const ActiveFilter = z
  .enum(["active", "inactive", "all"])
  .default("active")
  .describe("Which to list (default `active`)");

export const ListInstanceTypesInput = z.strictObject({ ...PageInput, filter: ActiveFilter });

export const CreateInstanceTypeInput = z.strictObject({
  name: Name.describe("Unique without regard to case"),
  description: Description.optional(),
  active: z.boolean().optional().describe("Default true"),
  order: Order.optional().describe("Default 0"),
  properties: InstanceTypeProperties.optional().describe("Default: none"),
  defaultStack: Id.nullable().optional().describe("A stack of this type or of none; default none"),
});
export type CreateInstanceTypeInput = z.infer<typeof CreateInstanceTypeInput>;

export const UpdateInstanceTypeInput = z.strictObject({
  instanceTypeId: Id,
  name: Name.optional().describe("Unique without regard to case"),
  description: Description.optional().describe("null removes it"),
  active: z.boolean().optional(),
  order: Order.optional(),
  properties: InstanceTypeProperties.optional().describe("Replaces the properties as a whole"),
  defaultStack: Id.nullable().optional().describe("A stack of this type or of none; null: none"),
});
export type UpdateInstanceTypeInput = z.infer<typeof UpdateInstanceTypeInput>;

// ---- Stacks ----

/** A Node-RED version, as npm names it: `4.1.15`, `4.1.0-beta.1`. */
export const NodeRedVersion = Text.max(64).regex(
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/,
  "A version such as 4.1.15",
);

export const StackProperties = z
  .looseObject({ nodered: NodeRedVersion.describe("The Node-RED version the stack runs") })
  .superRefine(checkFreeForm)
  .describe("`nodered` and any other free-form settings (at most 100 keys, 64 KiB)")
  .meta({ id: "StackProperties" });
export type StackProperties = z.infer<typeof StackProperties>;

export const StackName = Text.min(1, "Must not be blank")
  .max(128)
  .regex(/^[a-z0-9._-]+$/, "Lower-case letters, digits, '.', '-' and '_'");

export const Stack = z
  .object({
    id: Id,
    name: z.string(),
    label: z.string().nullable().describe("The name shown to users; `name` when null"),
    active: z.boolean().describe("Whether new instances may choose it"),
    projectType: Id.nullable().describe("The instance type it belongs to; null: none"),
    properties: z.record(z.string(), z.unknown()),
    replacedBy: Id.nullable().describe("The stack that replaced it, if any"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    instanceCount: Count,
    links: Links,
  })
  .meta({ id: "Stack" });
export type Stack = z.infer<typeof Stack>;

export const StackList = z
  .object({ meta: ListMeta, count: z.number().int(), stacks: z.array(Stack) })
  .meta({ id: "StackList" });
export type StackList = z.infer<typeof StackList>;

export const StackIdInput = z.strictObject({ stackId: Id });

export const ListStacksInput = z.strictObject({
  ...PageInput,
  filter: ActiveFilter,
  projectType: Id.optional().describe("Only the stacks of this instance type"),
});

const Label = Text.trim().min(1, "Must not be blank").max(128).nullable();

export const CreateStackInput = z.strictObject({
  name: StackName.describe("Unique without regard to case"),
  label: Label.optional(),
  active: z.boolean().optional().describe("Default true"),
  projectType: Id.nullable()
    .optional()
    .describe("The instance type it belongs to; default: the replaced stack's, else none"),
  properties: StackProperties,
  replaces: Id.optional().describe(
    "A stack this one replaces: that stack becomes inactive, with `replacedBy` this one",
  ),
});
export type CreateStackInput = z.infer<typeof CreateStackInput>;

export const UpdateStackInput = z.strictObject({
  stackId: Id,
  name: StackName.optional().describe("Unique without regard to case"),
  label: Label.optional().describe("null removes it"),
  active: z.boolean().optional(),
  projectType: Id.nullable().optional().describe("null: none"),
  properties: StackProperties.optional().describe(
    "Replaces the properties as a whole; not while instances use the stack",
  ),
});
export type UpdateStackInput = z.infer<typeof UpdateStackInput>;

// ---- Templates ----

/** Variables the platform sets itself; a template cannot give them. */
const PLATFORM_ENV = /^FF_/;

export const TemplateEnvVar = z
  .strictObject({
    ...EnvVar.shape,
    name: EnvVarName.refine((name) => !PLATFORM_ENV.test(name), "FF_ variables are the platform's"),
  })
  .meta({ id: "TemplateEnvVar" });
export type TemplateEnvVar = z.infer<typeof TemplateEnvVar>;

export const TemplateSettings = z
  .looseObject({
    env: z
      .array(TemplateEnvVar)
      .max(500, "At most 500 variables")
      .superRefine(eachNameOnce)
      .optional()
      .describe("Default environment variables of new instances"),
  })
  .superRefine(checkFreeForm)
  .describe("`env` and any other free-form settings (at most 100 keys, 64 KiB)")
  .meta({ id: "TemplateSettings" });
export type TemplateSettings = z.infer<typeof TemplateSettings>;

export const TemplatePolicy = freeForm()
  .describe("Which settings an instance's users may change (free-form; at most 100 keys, 64 KiB)")
  .meta({ id: "TemplatePolicy" });
export type TemplatePolicy = z.infer<typeof TemplatePolicy>;

export const TemplateSummary = z
  .object({
    id: Id,
    name: z.string(),
    description: z.string().nullable(),
    active: z.boolean().describe("Whether new instances may choose it"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    instanceCount: Count,
    links: Links,
  })
  .meta({ id: "TemplateSummary" });
export type TemplateSummary = z.infer<typeof TemplateSummary>;

export const Template = TemplateSummary.extend({
  settings: z
    .record(z.string(), z.unknown())
    .describe("`env` lists the default variables, hidden values blank"),
  policy: z.record(z.string(), z.unknown()),
}).meta({ id: "Template" });
export type Template = z.infer<typeof Template>;

export const TemplateList = z
  .object({ meta: ListMeta, count: z.number().int(), templates: z.array(TemplateSummary) })
  .meta({ id: "TemplateList" });
export type TemplateList = z.infer<typeof TemplateList>;

export const TemplateIdInput = z.strictObject({ templateId: Id });

export const ListTemplatesInput = z.strictObject({ ...PageInput });

export const CreateTemplateInput = z.strictObject({
  name: Name.describe("Unique without regard to case"),
  description: Description.optional(),
  active: z.boolean().optional().describe("Default true"),
  settings: TemplateSettings,
  policy: TemplatePolicy,
});
export type CreateTemplateInput = z.infer<typeof CreateTemplateInput>;

export const UpdateTemplateInput = z.strictObject({
  templateId: Id,
  name: Name.optional().describe("Unique without regard to case"),
  description: Description.optional().describe("null removes it"),
  active: z.boolean().optional(),
  settings: TemplateSettings.optional().describe(
    "Replaces the settings as a whole; a hidden variable given with an empty value keeps its value",
  ),
  policy: TemplatePolicy.optional().describe("Replaces the policy as a whole"),
});
export type UpdateTemplateInput = z.infer<typeof UpdateTemplateInput>;
