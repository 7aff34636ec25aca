// Reading the served OpenAPI document for the tests that walk every operation: the operations,
// their schemas with references resolved, and a valid value for any schema.
import { type Permission, type PermissionRule, PERMISSIONS } from "@flowplane/auth";

export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: boolean | number;
  maxItems?: number;
  minItems?: number;
  nullable?: boolean;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
};
export type Parameter = { in: string; name: string; required?: boolean; schema?: Schema };
export type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  "x-permission"?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
};

export interface DocumentOperation {
  /** `PUT /api/v1/teams/{teamId}` */
  name: string;
  method: string;
  template: string;
  operation: Operation;
  /** Path parameter names in order. */
  pathParams: string[];
}

/**
 * The device agent's own operations (tag "Device agent", outside tRPC): the device's token or
 * none, no `x-permission`. The walks of people's operations leave them out (`operationsOf`) and
 * check them by themselves (`agentOperationsOf`).
 */
export const AGENT_TAG = "Device agent";
export const isAgentOperation = (operation: Operation) =>
  operation.tags?.includes(AGENT_TAG) ?? false;

/** Every operation of the document for people (with `x-permission`): not the agent's. */
export function operationsOf(document: { paths: Record<string, unknown> }): DocumentOperation[] {
  return allOperationsOf(document).filter((o) => !isAgentOperation(o.operation));
}

/** The device agent's own operations. */
export function agentOperationsOf(document: {
  paths: Record<string, unknown>;
}): DocumentOperation[] {
  return allOperationsOf(document).filter((o) => isAgentOperation(o.operation));
}

function allOperationsOf(document: { paths: Record<string, unknown> }): DocumentOperation[] {
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods as Record<string, Operation>).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${template}`,
      method: method.toUpperCase(),
      template,
      operation,
      pathParams: [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
    })),
  );
}

/** The operation's permission and its rule in the matrix, from its `x-permission`. */
export function permissionOf(operation: DocumentOperation): {
  permission: Permission;
  rule: PermissionRule;
} {
  const permission = operation.operation["x-permission"];
  if (!permission || !(permission in PERMISSIONS)) {
    throw new Error(`${operation.name}: x-permission ${permission} is not in the matrix`);
  }
  return {
    permission: permission as Permission,
    rule: PERMISSIONS[permission as Permission],
  };
}

export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

export function accepts(types: Set<string>, value: unknown): boolean {
  const type = jsonType(value);
  return types.has("any") || types.has(type) || (type === "integer" && types.has("number"));
}

let exampleCounter = 0;

/** Schema helpers bound to one document (its `#/components/...` references). */
export function schemaWalker(document: unknown) {
  /** Resolves `#/components/...` references within the document. */
  function deref(schema: Schema): Schema {
    let current = schema;
    for (let depth = 0; current.$ref; depth++) {
      if (depth > 20) throw new Error(`$ref loop at ${schema.$ref}`);
      const ref = current.$ref;
      if (!ref.startsWith("#/")) throw new Error(`external $ref ${ref}`);
      let target: any = document;
      for (const part of ref.slice(2).split("/")) {
        target = target?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
      }
      if (!target) throw new Error(`unresolved $ref ${ref}`);
      current = target;
    }
    return current;
  }

  /** The JSON types a schema accepts. */
  function jsonTypes(input: Schema): Set<string> {
    const schema = deref(input);
    const types = new Set<string>();
    if (schema.type) types.add(schema.type);
    if (schema.nullable) types.add("null");
    // Approximate: a union accepts what any branch does; allOf parts are taken alike.
    for (const branch of [
      ...(schema.anyOf ?? []),
      ...(schema.oneOf ?? []),
      ...(schema.allOf ?? []),
    ]) {
      for (const type of jsonTypes(branch)) types.add(type);
    }
    if (schema.enum) for (const value of schema.enum) types.add(jsonType(value));
    return types.size === 0 ? new Set(["any"]) : types;
  }

  /** A valid value for a schema, derived from it (required properties only, for objects). */
  function example(input: Schema, where: string): unknown {
    const schema = deref(input);
    if (schema.enum?.length) return schema.enum[0];
    const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
    if (branch) return example(branch, where);
    if (schema.allOf) {
      return Object.assign({}, ...schema.allOf.map((part) => example(part, where)));
    }
    switch (schema.type) {
      case "string": {
        if (schema.format === "date-time") return new Date(Date.now() + 86_400_000).toISOString();
        if (schema.format === "email") return `walk-${++exampleCounter}@example.com`;
        // A webhook's URL: a closed port of loopback, which the harness allows (nothing listens).
        if (schema.format === "uri") return "http://127.0.0.1:9/walk";
        const n = ++exampleCounter;
        const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined;
        const candidate = [
          `walk-${n}`,
          `walk_${n}`,
          `walk${n}`,
          `w${n}`,
          "a",
          "1",
          `walk-long-value-${n}`,
          // A version (a stack's Node-RED).
          `1.0.${n}`,
        ].find(
          (value) =>
            (!pattern || pattern.test(value)) &&
            value.length >= (schema.minLength ?? 0) &&
            value.length <= (schema.maxLength ?? Infinity),
        );
        if (candidate === undefined) {
          throw new Error(
            `${where}: no example value for ${JSON.stringify(schema)}; extend example()`,
          );
        }
        return candidate;
      }
      case "integer":
      case "number":
        return schema.minimum === undefined
          ? 1
          : schema.minimum + (schema.exclusiveMinimum === true ? 1 : 0);
      case "boolean":
        return false;
      case "array": {
        const items = schema.items ?? {};
        return Array.from({ length: schema.minItems ?? 0 }, () => example(items, `${where}[]`));
      }
      case "object":
      case undefined: {
        const body: Record<string, unknown> = {};
        for (const name of schema.required ?? []) {
          const property = schema.properties?.[name];
          if (!property) throw new Error(`${where}: required ${name} has no schema`);
          body[name] = example(property, `${where}.${name}`);
        }
        return body;
      }
      default:
        throw new Error(`${where}: no example value for type ${schema.type}; extend example()`);
    }
  }

  /**
   * The operation's JSON body schema, resolved, if it takes one. A body that is one of several
   * requests (`oneOf`: POST /devices, a creation or a device's setup) gives its first, which is
   * the one people's tokens send (the input walk walks every one).
   */
  function bodySchema(operation: Operation): Schema | undefined {
    const schema = operation.requestBody?.content?.["application/json"]?.schema;
    if (!schema) return undefined;
    const body = deref(schema);
    return body.oneOf?.[0] ? deref(body.oneOf[0]) : body;
  }

  return { deref, jsonTypes, example, bodySchema };
}

export type SchemaWalker = ReturnType<typeof schemaWalker>;
