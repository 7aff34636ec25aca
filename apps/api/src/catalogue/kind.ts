// One definition of what a kind of catalogue entry is (instance types, stacks, templates): the
// builder in procedures.ts makes the same five procedures of each from it, and the kinds' files
// hold only what differs between them.
import type { Permission } from "@flowplane/auth";
import type { Db } from "@flowplane/db";
import type { z } from "zod";
import { ApiError, type FieldError, invalidRequest } from "../core/errors";

/** A row of the kind, as its views and audit entries read it. */
export interface Entry {
  id: string;
  name: string;
}

/** A change's field as the audit log records it. */
export interface Update {
  key: string;
  old?: unknown;
  new?: unknown;
}

/** The zod schemas of a kind's inputs and outputs (from @flowplane/contract). */
export interface KindSchemas {
  list: z.ZodType;
  listOutput: z.ZodType;
  /** `{ <idField>: Id }` */
  id: z.ZodType;
  view: z.ZodType;
  create: z.ZodType;
  /** `{ <idField>: Id, …the fields it may change }` */
  update: z.ZodType;
}

type Out<T extends z.ZodType> = z.output<T>;
/** An update's fields without the id. */
export type ChangeOf<S extends KindSchemas> = Record<string, unknown> & Partial<Out<S["update"]>>;

export interface CatalogueKind<Row extends Entry, Detail extends Row, S extends KindSchemas> {
  /** Under /api/v1 (FlowFuse's name): `project-types`. */
  path: string;
  /** The path parameter that names one entry: `instanceTypeId`. */
  idField: string;
  /** The permissions' prefix (`project-type:list`), also the audit events' (`platform.project-type.created`). */
  name: "project-type" | "stack" | "template";
  /** The key of the entry in audit bodies: `projectType`. */
  auditKey: string;
  /** How messages name one: `instance type` ("An instance type …", "The instance type …"). */
  noun: string;
  tag: string;
  /** Operation summaries and descriptions. */
  docs: Record<Operation, { summary: string; description?: string }>;
  schemas: S;

  // Reading.
  list(
    db: Db,
    input: Out<S["list"]>,
  ): Promise<{ rows: Detail[]; total: number; nextCursor?: string }>;
  /** The list's envelope around its entries: `{ meta, count, types }`. */
  listOf(
    page: { meta: { next_cursor?: string }; count: number },
    entries: unknown[],
  ): z.input<S["listOutput"]>;
  findDetail(db: Db, id: string): Promise<Detail | undefined>;
  view(row: Detail, baseUrl: string): z.input<S["view"]>;
  /** How an entry is listed (default: its view). */
  summaryView?(row: Detail, baseUrl: string): unknown;
  /** A just-created entry's detail: nothing uses it yet. */
  unused(row: Row): Detail;

  // Writing, each inside its operation's transaction.
  /** Inserts the entry (checking its references first); `audit`: what else the log records. */
  insert(trx: Db, input: Out<S["create"]>): Promise<{ row: Row; audit?: Record<string, unknown> }>;
  /** The entry before a change: locked where a concurrent change or use must wait. */
  before(trx: Db, id: string): Promise<Row | undefined>;
  /** The fields a change may give, for "nothing to change". */
  fields: string;
  /** Checks a change against the entry as it was, and completes it. */
  prepare?(trx: Db, change: ChangeOf<S>, before: Row, id: string): Promise<ChangeOf<S>>;
  /** A field of the change as the row holds it (`defaultStack` is `default_stack_id`). */
  column(before: Row, key: string): unknown;
  /** Refuses updates that the entry's use forbids. */
  checkUpdates?(trx: Db, updates: Update[], id: string): Promise<void>;
  update(trx: Db, id: string, change: ChangeOf<S>): Promise<Row | undefined>;
  /** The updates as logged (default: as they are). */
  loggedUpdates?(updates: Update[]): Update[];
  /** The entry to delete, locked so that nothing starts using it meanwhile. */
  lock(trx: Db, id: string): Promise<Row | undefined>;
  /** What uses it, counted: `[[3, "instance"], [0, "stack"]]`. */
  usage(trx: Db, id: string): Promise<[number, string][]>;
  delete(trx: Db, id: string): Promise<Row | undefined>;
  /** A reference a write named that was deleted meanwhile (a foreign-key violation). */
  missingReference?(): ApiError;
}

export type Operation = "all" | "byId" | "create" | "update" | "delete";

export const permissionOf = (
  kind: { name: string },
  action: "list" | "read" | "create" | "edit" | "delete",
) => `${kind.name}:${action}` as Permission;

export const nameTaken = (noun: string) =>
  new ApiError(409, "invalid_name", `${article(noun)} ${noun} with this name already exists`, [
    { path: "name", message: "Already in use" },
  ]);

const article = (noun: string) => (/^[aeiou]/.test(noun) ? "An" : "A");

export const invalidStack = (message: string, fields?: FieldError[]) =>
  new ApiError(400, "invalid_stack", message, fields);

/** An entry in use cannot be deleted (nor, for a stack, have its properties changed). */
export function inUse(
  what: string,
  uses: [number | undefined, string][],
  action = "deleted",
): ApiError {
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
export function changes(
  change: Record<string, unknown>,
  before: (key: string) => unknown,
): Update[] {
  return Object.keys(change)
    .filter((key) => change[key] !== undefined && !same(change[key], before(key)))
    .map((key) => ({ key, old: before(key), new: change[key] }));
}

export function nothingToChange(fields: string) {
  return invalidRequest("Nothing to change: give at least one field", [
    { path: "", message: `Give ${fields}` },
  ]);
}

export const summary = (row: Entry) => ({ id: row.id, name: row.name });
