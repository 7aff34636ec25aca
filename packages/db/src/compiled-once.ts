// Hot queries compiled once. Kysely builds and compiles a query on every call, which on the
// request path of a small indexed lookup costs more Node CPU than the lookup itself.
import {
  type Compilable,
  type CompiledQuery,
  type InferResult,
  type Kysely,
  type RawBuilder,
} from "kysely";
import type { Database } from "./schema";

const PLACEHOLDER = "\u0000flowplane-argument-";

/**
 * Wraps a query builder whose arguments are all scalar parameters (no lists, no optional parts):
 * it is compiled the first time for each database handle with placeholders for the arguments,
 * and every call runs that SQL with its own values.
 */
export function compiledOnce<A extends unknown[], Q extends Compilable<unknown>>(
  build: (db: Kysely<Database>, ...args: A) => Q,
): (db: Kysely<Database>, ...args: A) => Promise<InferResult<Q>>;
/** The same for a raw `sql` statement; an argument may be an array sent as one parameter. */
export function compiledOnce<A extends unknown[], R>(
  build: (db: Kysely<Database>, ...args: A) => RawBuilder<R>,
): (db: Kysely<Database>, ...args: A) => Promise<R[]>;
export function compiledOnce<A extends unknown[]>(
  build: (db: Kysely<Database>, ...args: A) => Compilable<unknown> | RawBuilder<unknown>,
): (db: Kysely<Database>, ...args: A) => Promise<unknown[]> {
  const cache = new WeakMap<Kysely<Database>, CompiledQuery>();
  return async (db, ...args) => {
    let compiled = cache.get(db);
    if (!compiled) {
      const placeholders = args.map((_, i) => `${PLACEHOLDER}${i}`) as A;
      // A query builder compiles itself; a raw statement compiles against the database.
      compiled = build(db, ...placeholders).compile(db);
      cache.set(db, compiled);
    }
    const parameters = compiled.parameters.map((value) =>
      typeof value === "string" && value.startsWith(PLACEHOLDER)
        ? args[Number(value.slice(PLACEHOLDER.length))]
        : value,
    );
    const result = await db.executeQuery({ ...compiled, parameters });
    return result.rows;
  };
}
