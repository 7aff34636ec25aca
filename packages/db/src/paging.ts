// Keyset paging, the one shape of every list: rows in (key, id) order, `limit` at a time, after
// the row whose id is the cursor (its key read in the same statement, so a page is one index range
// scan however deep it is), with the count of every row that matches.
import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import type { Database } from "./schema";

export interface PageRequest {
  limit: number;
  /** The id of the last row of the previous page. */
  cursor?: string;
}

export interface Page<T> {
  rows: T[];
  total: number;
  /** The cursor of the next page; none on the last. */
  nextCursor?: string;
}

/** A page of at most `limit` rows out of `limit + 1` fetched (the extra one says there are more). */
export function pageOf<T extends { id: string }>(rows: T[], limit: number) {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, nextCursor: more ? page.at(-1)!.id : undefined };
}

/**
 * The page `request` asks of `rows` (filtered, not yet ordered) in `table`'s (`key`, id) order;
 * `count` counts every row that matches the same filters.
 */
export async function keysetPage<O extends { id: string }>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's query
  rows: SelectQueryBuilder<any, any, O>,
  count: { executeTakeFirstOrThrow(): Promise<{ n: number }> },
  order: { table: string; key: string },
  request: PageRequest,
): Promise<Page<O>> {
  const key = sql.ref(`${order.table}.${order.key}`);
  const id = sql.ref(`${order.table}.id`);
  let query = rows
    .orderBy(key)
    .orderBy(id)
    .limit(request.limit + 1);
  if (request.cursor !== undefined) {
    query = query.where(
      sql<boolean>`(${key}, ${id}) > (select ${sql.ref(`c.${order.key}`)}, c.id from ${sql.table(order.table)} c where c.id = ${request.cursor})`,
    );
  }
  const [found, total] = await Promise.all([query.execute(), count.executeTakeFirstOrThrow()]);
  return { ...pageOf(found, request.limit), total: total.n };
}

/** `count(*)` as an int, named `n`, as `keysetPage` reads it. */
export const countAll = () => sql<number>`count(*)::int`.as("n");

/**
 * The rows of `rows` counted up to `cap`, as `keysetPage` reads a count: the scan stops at `cap`
 * rows, so a page of a large table does not pay for reading all of it.
 */
export function countUpTo(
  db: Kysely<Database>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table's query
  rows: SelectQueryBuilder<Database, any, object>,
  cap: number,
) {
  const capped = rows.select(sql<number>`1`.as("one")).limit(cap);
  return db.selectFrom(capped.as("capped")).select(countAll());
}

/** `%text%` for LIKE and ILIKE, with their own wildcards (and the escape) in the text matched literally. */
export function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
