// Queries many tables share, written once: the team a row belongs to, rows counted by one
// column's value, and a row or the rows whose columns have given values.
import type { Kysely, Selectable } from "kysely";
import { countAll } from "./paging";
import type { Database } from "./schema";

// Kysely cannot follow a table name that is a type parameter: these queries are written for any
// table, and typed by the tables that have the columns they read.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** The tables whose rows have every one of these columns. */
type TableWith<C extends string> = {
  [T in keyof Database]: [C] extends [keyof Database[T]] ? T : never;
}[keyof Database];

/** The team that a row of `table` belongs to, by the row's id (for the permission check). */
export function teamOfRow(table: TableWith<"id" | "team_id">) {
  return (db: Kysely<Database>, id: string): Promise<string | undefined> =>
    findValue(db, table, "team_id", { id }) as Promise<string | undefined>;
}

/** How many rows of `table` have `value` in `column`. */
export async function countWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  column: keyof Database[T] & string,
  value: string,
): Promise<number> {
  const [name, key]: [string, string] = [table, column];
  const row: { n: number } = await (db as AnyDb)
    .selectFrom(name)
    .select(countAll())
    .where(key, "=", value)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Values of some of `T`'s columns, each compared for equality. */
type ColumnValues<T extends keyof Database> = { [C in keyof Database[T] & string]?: string };

/** A query of the rows of `table` whose columns have these values, selecting nothing yet. */
function fromWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
) {
  const name: string = table;
  let query = (db as AnyDb).selectFrom(name);
  for (const [column, value] of Object.entries(values)) query = query.where(column, "=", value);
  return query;
}

/** The row of `table` whose columns have these values (a key: at most one has them). */
export async function findWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
): Promise<Selectable<Database[T]> | undefined> {
  return fromWhere(db, table, values).selectAll().executeTakeFirst() as Promise<
    Selectable<Database[T]> | undefined
  >;
}

/** One column of the row of `table` whose columns have these values (a key). */
export async function findValue<
  T extends keyof Database,
  C extends keyof Selectable<Database[T]> & string,
>(
  db: Kysely<Database>,
  table: T,
  column: C,
  values: ColumnValues<T>,
): Promise<Selectable<Database[T]>[C] | undefined> {
  const row: Record<string, unknown> | undefined = await fromWhere(db, table, values)
    .select(column)
    .executeTakeFirst();
  return row?.[column] as Selectable<Database[T]>[C] | undefined;
}

/** The rows of `table` whose columns have these values, by `order` (then id). */
export async function listWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
  order: (keyof Database[T] & string)[],
): Promise<Selectable<Database[T]>[]> {
  let query = fromWhere(db, table, values).selectAll();
  for (const column of [...order, "id"]) query = query.orderBy(column);
  return query.execute() as Promise<Selectable<Database[T]>[]>;
}
