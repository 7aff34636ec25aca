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
  return async (db: Kysely<Database>, id: string): Promise<string | undefined> => {
    const row: { team_id: string } | undefined = await (db as AnyDb)
      .selectFrom(table)
      .select("team_id")
      .where("id", "=", id)
      .executeTakeFirst();
    return row?.team_id;
  };
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

/** The rows of `table` whose columns have these values. */
function rowsWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
) {
  const name: string = table;
  let query = (db as AnyDb).selectFrom(name).selectAll();
  for (const [column, value] of Object.entries(values)) query = query.where(column, "=", value);
  return query;
}

/** The row of `table` whose columns have these values (a key: at most one has them). */
export async function findWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
): Promise<Selectable<Database[T]> | undefined> {
  return rowsWhere(db, table, values).executeTakeFirst() as Promise<
    Selectable<Database[T]> | undefined
  >;
}

/** The rows of `table` whose columns have these values, by `order` (then id). */
export async function listWhere<T extends keyof Database>(
  db: Kysely<Database>,
  table: T,
  values: ColumnValues<T>,
  order: (keyof Database[T] & string)[],
): Promise<Selectable<Database[T]>[]> {
  let query = rowsWhere(db, table, values);
  for (const column of [...order, "id"]) query = query.orderBy(column);
  return query.execute() as Promise<Selectable<Database[T]>[]>;
}
