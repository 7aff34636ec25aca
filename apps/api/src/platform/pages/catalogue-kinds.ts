// What each catalogue page edits (team types, instance types, stacks, templates): the procedures
// it calls, the fields of its form and how a posted form becomes the procedure's input. The input
// is handed to the API as posted (a JSON field that does not parse goes as its text), so what is
// wrong with it is the API's message.
import type { AdminCaller } from "./shared";

export interface Choice {
  value: string;
  label: string;
}

export interface FieldSpec {
  name: string;
  label: string;
  kind: "text" | "textarea" | "number" | "check" | "json" | "select";
  hint?: string;
  required?: boolean;
  /** Empty: null when changing (removes it), left out when creating. */
  nullable?: boolean;
  /** The choices of a select, read from the API; the first is "none" (the empty value). */
  choices?: (caller: AdminCaller) => Promise<Choice[]>;
}

/** An entry as the pages read it. */
export type Entry = { id: string; name: string } & Record<string, unknown>;

/** The five procedures of one kind, as the pages call them (the API validates the inputs). */
export interface Crud {
  all(input: Record<string, unknown>): Promise<Record<string, unknown>>;
  byId(input: Record<string, string>): Promise<Entry>;
  create(input: Record<string, unknown>): Promise<Entry>;
  update(input: Record<string, unknown>): Promise<Entry>;
  delete(input: Record<string, string>): Promise<unknown>;
}

export interface KindPage {
  /** The tab's key and the URL's segment: /admin/<key>. */
  key: "team-types" | "instance-types" | "stacks" | "templates";
  title: string;
  /** How a message names one: "team type". */
  noun: string;
  procedures: (caller: AdminCaller) => Crud;
  idField: string;
  /** The list's key in the procedure's answer (`types`). */
  listKey: string;
  listInput: Record<string, unknown>;
  fields: FieldSpec[];
  /** The list's columns after the name. */
  columns: { label: string; value: (entry: Entry) => string }[];
}

const crud = (procedures: unknown) => procedures as Crud;
const yesNo = (value: unknown) => (value ? "yes" : "no");
const count = (value: unknown) => String(value ?? 0);

const NAME: FieldSpec = { name: "name", label: "Name", kind: "text", required: true };
const DESCRIPTION: FieldSpec = {
  name: "description",
  label: "Description (optional)",
  kind: "textarea",
  nullable: true,
};
const ACTIVE: FieldSpec = {
  name: "active",
  label: "Active (new ones may choose it)",
  kind: "check",
};
const ORDER: FieldSpec = {
  name: "order",
  label: "Order (optional)",
  kind: "number",
  hint: "Lists show them by ascending order; default 0.",
};
const json = (name: string, label: string, hint: string, required = false): FieldSpec => ({
  name,
  label,
  kind: "json",
  hint,
  required,
});

/** What a type (of team or of instance) has: a name, a description, active, an order. */
const TYPE_FIELDS = [NAME, DESCRIPTION, ACTIVE, ORDER];
/** A type's columns: active and order. */
const TYPE_COLUMNS: KindPage["columns"] = [
  { label: "Active", value: (entry) => yesNo(entry.active) },
  { label: "Order", value: (entry) => String(entry.order) },
];
/** A type's list: every one, active or not. */
const TYPE_LIST = { listKey: "types", listInput: { filter: "all" } };

async function stackChoices(caller: AdminCaller): Promise<Choice[]> {
  const list = await caller.stacks.all({ filter: "all", limit: 1000 });
  return [
    { value: "", label: "None" },
    ...list.stacks.map((stack) => ({
      value: stack.id,
      label: `${stack.label ?? stack.name} (${stack.name})`,
    })),
  ];
}

async function instanceTypeChoices(caller: AdminCaller): Promise<Choice[]> {
  const list = await caller.projectTypes.all({ filter: "all", limit: 1000 });
  return [
    { value: "", label: "None" },
    ...list.types.map((type) => ({ value: type.id, label: type.name })),
  ];
}

export const KINDS: KindPage[] = [
  {
    key: "team-types",
    title: "Team types",
    noun: "team type",
    procedures: (caller) => crud(caller.teamTypes),
    idField: "teamTypeId",
    ...TYPE_LIST,
    fields: [
      ...TYPE_FIELDS,
      json("properties", "Properties (JSON, optional)", 'Limits, e.g. {"users": {"limit": 5}}.'),
    ],
    columns: [
      ...TYPE_COLUMNS,
      { label: "Description", value: (entry) => String(entry.description ?? "—") },
    ],
  },
  {
    key: "instance-types",
    title: "Instance types",
    noun: "instance type",
    procedures: (caller) => crud(caller.projectTypes),
    idField: "instanceTypeId",
    ...TYPE_LIST,
    fields: [
      ...TYPE_FIELDS,
      json("properties", "Properties (JSON, optional)", "Free-form limits and settings."),
      {
        name: "defaultStack",
        label: "Default stack",
        kind: "select",
        nullable: true,
        choices: stackChoices,
      },
    ],
    columns: [
      ...TYPE_COLUMNS,
      { label: "Instances", value: (entry) => count(entry.instanceCount) },
      { label: "Stacks", value: (entry) => count(entry.stackCount) },
    ],
  },
  {
    key: "stacks",
    title: "Stacks",
    noun: "stack",
    procedures: (caller) => crud(caller.stacks),
    idField: "stackId",
    listKey: "stacks",
    listInput: { filter: "all" },
    fields: [
      NAME,
      { name: "label", label: "Label (optional)", kind: "text", nullable: true },
      ACTIVE,
      {
        name: "projectType",
        label: "Instance type",
        kind: "select",
        nullable: true,
        choices: instanceTypeChoices,
      },
      json(
        "properties",
        "Properties (JSON)",
        'The Node-RED version it runs, e.g. {"nodered": "4.1.15"}; not changed while instances use it.',
        true,
      ),
    ],
    columns: [
      { label: "Label", value: (entry) => String(entry.label ?? "—") },
      { label: "Active", value: (entry) => yesNo(entry.active) },
      {
        label: "Node-RED",
        value: (entry) => String((entry.properties as { nodered?: unknown })?.nodered ?? "—"),
      },
      { label: "Instances", value: (entry) => count(entry.instanceCount) },
    ],
  },
  {
    key: "templates",
    title: "Templates",
    noun: "template",
    procedures: (caller) => crud(caller.templates),
    idField: "templateId",
    listKey: "templates",
    listInput: {},
    fields: [
      NAME,
      DESCRIPTION,
      ACTIVE,
      json("settings", "Settings (JSON)", 'Default settings, e.g. {"env": []}.', true),
      json("policy", "Policy (JSON)", "Which settings users may change, e.g. {}.", true),
    ],
    columns: [
      { label: "Active", value: (entry) => yesNo(entry.active) },
      { label: "Description", value: (entry) => String(entry.description ?? "—") },
      { label: "Instances", value: (entry) => count(entry.instanceCount) },
    ],
  },
];

/** A JSON field's text: parsed when it parses, else the text itself (which the API refuses). */
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * The input of a create (`before` undefined) or an update from the posted form's values. An
 * update leaves out a JSON field that says what the entry already has (a stack in use refuses any
 * change of its properties, even to the same).
 */
export function inputOf(
  kind: KindPage,
  values: Record<string, string>,
  before?: Entry,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const spec of kind.fields) {
    const value = values[spec.name] ?? "";
    if (spec.kind === "check") {
      input[spec.name] = value !== "";
    } else if (value === "") {
      if (spec.nullable && before) input[spec.name] = null;
      else if (spec.required) input[spec.name] = spec.kind === "json" ? undefined : "";
    } else if (spec.kind === "number") {
      input[spec.name] = Number.isFinite(Number(value)) ? Number(value) : value;
    } else if (spec.kind === "json") {
      const next = parsed(value);
      if (!before || JSON.stringify(next) !== JSON.stringify(before[spec.name])) {
        input[spec.name] = next;
      }
    } else {
      input[spec.name] = value;
    }
  }
  return input;
}

/** The form's values of an entry (or a new one's defaults). */
export function valuesOf(kind: KindPage, entry?: Entry): Record<string, string> {
  const values: Record<string, string> = {};
  for (const spec of kind.fields) {
    const value = entry?.[spec.name];
    if (spec.kind === "check") values[spec.name] = !entry || value ? "on" : "";
    else if (spec.kind === "json") values[spec.name] = entry ? JSON.stringify(value, null, 2) : "";
    else values[spec.name] = value === null || value === undefined ? "" : String(value);
  }
  return values;
}
