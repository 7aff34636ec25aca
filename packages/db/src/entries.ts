// Tables of entries administrators keep — team types, and the catalogue's instance types, stacks
// and templates: one definition of how an entry is found, locked, listed (active, inactive or
// all; a page at a time), inserted, changed and deleted, its JSON columns written as JSON text.
import {
  type AliasedRawBuilder,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  sql,
} from "kysely";
import { newId } from "./ids";
import { countAll, keysetPage, type Page, type PageRequest } from "./paging";
import type { Database } from "./schema";

// Kysely cannot follow a table name that is a type parameter: these queries are written for any
// table, and typed by the entry's row where they return.
/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyDb = Kysely<any>;
type AnyQuery<O> = SelectQueryBuilder<any, any, O>;
/* eslint-enable @typescript-eslint/no-explicit-any */

type EntryTable = "team_types" | "project_types" | "project_stacks" | "project_templates";

export type ActiveFilter = "active" | "inactive" | "all";

export interface EntryTableOptions {
  /** What entries are listed by (then id). */
  order: "order" | "name";
  /** Columns stored as JSON. */
  json: readonly string[];
  /** What a listed (detailed) entry has besides its row: counts of what uses it. */
  counts?: AliasedRawBuilder<number, string>[];
}

/**
 * `Detail`: a listed entry, its row and `counts`; `Values`: what `insert` and `update` take, by
 * column (JSON ones as values).
 */
export function entryTable<
  T extends EntryTable,
  Detail = Selectable<Database[T]>,
  Values extends object = Record<string, unknown>,
>(table: T, options: EntryTableOptions) {
  type Row = Selectable<Database[T]>;
  const name: string = table;
  const any = (db: Kysely<Database>) => db as AnyDb;
  const asJson = (values: object) =>
    Object.fromEntries(
      Object.entries(values)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => [key, options.json.includes(key) ? JSON.stringify(value) : value]),
    );
  const detailed = (db: Kysely<Database>) =>
    any(db)
      .selectFrom(name)
      .selectAll(name)
      .select(options.counts ?? []) as AnyQuery<Detail & { id: string }>;
  const active = (filter: ActiveFilter | undefined) =>
    filter === undefined || filter === "all" ? undefined : filter === "active";

  return {
    async find(db: Kysely<Database>, id: string): Promise<Row | undefined> {
      return any(db)
        .selectFrom(name)
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst() as Promise<Row | undefined>;
    },
    /** With the counts the list shows. */
    async findDetail(db: Kysely<Database>, id: string): Promise<Detail | undefined> {
      return detailed(db).where(`${name}.id`, "=", id).executeTakeFirst();
    },
    /** The entry, its row locked until the transaction ends. */
    async lock(trx: Kysely<Database>, id: string): Promise<Row | undefined> {
      return any(trx)
        .selectFrom(name)
        .selectAll()
        .where("id", "=", id)
        .forUpdate()
        .executeTakeFirst() as Promise<Row | undefined>;
    },
    /**
     * The first active entry by `order` (then id) of those `narrow` keeps: what something new gets
     * when it names none.
     */
    async firstActive(
      db: Kysely<Database>,
      order: readonly string[],
      narrow: Record<string, string> = {},
    ): Promise<Row | undefined> {
      let query = any(db).selectFrom(name).selectAll().where("active", "=", true);
      for (const [column, value] of Object.entries(narrow)) query = query.where(column, "=", value);
      for (const column of [...order, "id"]) query = query.orderBy(column);
      return query.limit(1).executeTakeFirst() as Promise<Row | undefined>;
    },
    /**
     * A page of entries in `order` (then id); `narrow` adds filters of the kind's own. The total
     * counts every entry the filters keep.
     */
    async list(
      db: Kysely<Database>,
      request: PageRequest & { filter?: ActiveFilter },
      narrow: Record<string, string | undefined> = {},
    ): Promise<Page<Detail & { id: string }>> {
      const where: [string, unknown][] = Object.entries(narrow).filter(([, v]) => v !== undefined);
      const only = active(request.filter);
      if (only !== undefined) where.push(["active", only]);
      let rows = detailed(db);
      let total = any(db).selectFrom(name).select(countAll());
      for (const [column, value] of where) {
        rows = rows.where(`${name}.${column}`, "=", value);
        total = total.where(column, "=", value);
      }
      return keysetPage(rows, total, { table: name, key: options.order }, request);
    },
    async insert(trx: Kysely<Database>, values: Values): Promise<Row> {
      return any(trx)
        .insertInto(name)
        .values({ id: newId(), ...asJson(values) })
        .returningAll()
        .executeTakeFirstOrThrow() as Promise<Row>;
    },
    /** Changes the columns given (undefined: unchanged), and `updated_at`. */
    async update(
      trx: Kysely<Database>,
      id: string,
      columns: Partial<Values>,
    ): Promise<Row | undefined> {
      return any(trx)
        .updateTable(name)
        .set({ ...asJson(columns), updated_at: sql`now()` })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst() as Promise<Row | undefined>;
    },
    async delete(trx: Kysely<Database>, id: string): Promise<Row | undefined> {
      return any(trx)
        .deleteFrom(name)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst() as Promise<Row | undefined>;
    },
  };
}
