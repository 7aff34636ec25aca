// The database's contents for a backup, and loading them back (apps/api's `pnpm backup` and
// `pnpm restore`). The schema is not dumped: it is the migrations' own, so a dump is its tables'
// rows (one JSON object a line, as PostgreSQL's row_to_json writes them) and its sequences'
// positions, read in one repeatable-read transaction — one snapshot, as pg_dump's, while the
// platform goes on writing. The same format for every kind (PostgreSQL, embedded or not, and
// PGlite), so a dump restores into any of them. Loading: the migrations up to the dump's newest,
// then the rows in one transaction with the user triggers off (the audit log's trigger would write
// its events twice) and the foreign keys dropped and added again (rows in any order; re-adding
// them checks every row), then the remaining migrations.
import { Migrator, sql } from "kysely";
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Db } from "./create-db";
import { migrations } from "./migrations/index";

/** Kysely's own tables: written by the migrations a load runs, never loaded. */
const MIGRATION_TABLES = ["kysely_migration", "kysely_migration_lock"];
const BATCH = 500;

export interface DumpSummary {
  /** The schema's newest migration when the snapshot was taken. */
  migration: string;
  /** Each table and how many rows it holds (its file: `<name>.jsonl`). */
  tables: { name: string; rows: number }[];
  /** Each sequence's last value (null: never used). */
  sequences: { name: string; value: string | null }[];
}

/** The names of the migrations this code knows, in order. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

/** The tables of the connection's schema, the platform's and Kysely's. */
export async function schemaTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select tablename as name from pg_tables where schemaname = current_schema() order by 1
  `.execute(db);
  return rows.map((r) => r.name);
}

/** Writes every table's rows to `<dir>/<table>.jsonl` (0600), all from one snapshot. */
export async function dumpDatabase(db: Db, dir: string): Promise<DumpSummary> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute(async (trx) => {
      const { rows: newest } = await sql<{ name: string }>`
        select name from kysely_migration order by name desc limit 1
      `.execute(trx);
      if (!newest[0]) throw new Error("the database has no platform schema (no migration ran)");
      const tables: DumpSummary["tables"] = [];
      for (const name of await schemaTables(trx as unknown as Db)) {
        if (MIGRATION_TABLES.includes(name)) continue;
        const out = createWriteStream(join(dir, `${name}.jsonl`), { mode: 0o600 });
        let count = 0;
        try {
          await sql`declare dump_rows no scroll cursor for
            select row_to_json(t)::text as r from ${sql.table(name)} t`.execute(trx);
          for (;;) {
            const { rows } = await sql<{
              r: string;
            }>`fetch ${sql.raw(String(BATCH))} from dump_rows`.execute(trx);
            if (rows.length === 0) break;
            count += rows.length;
            if (!out.write(rows.map((row) => `${row.r}\n`).join(""))) await once(out, "drain");
          }
          await sql`close dump_rows`.execute(trx);
        } finally {
          out.end();
          await once(out, "close");
        }
        tables.push({ name, rows: count });
      }
      const { rows: sequences } = await sql<{ name: string; value: string | null }>`
        select sequencename as name, last_value::text as value from pg_sequences
        where schemaname = current_schema() order by 1
      `.execute(trx);
      return { migration: newest[0].name, tables, sequences };
    });
}

/** Kysely's migrator over the connection's own schema (as `migrateToLatest`). */
async function migrator(db: Db): Promise<Migrator> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: rows[0]!.schema,
  });
}

function check({ error }: { error?: unknown }): void {
  if (error) throw error instanceof Error ? error : new Error(String(error));
}

async function* lines(path: string): AsyncGenerator<string[]> {
  const reader = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let batch: string[] = [];
  for await (const line of reader) {
    if (!line) continue;
    batch.push(line);
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Loads a dump (`dumpDatabase`'s files in `dir`, its summary) into a database without the
 * platform's tables: the migrations up to the dump's, its rows, then the remaining migrations.
 */
export async function loadDatabase(db: Db, dir: string, dump: DumpSummary): Promise<void> {
  check(await (await migrator(db)).migrateTo(dump.migration));
  const existing = new Set(await schemaTables(db));
  for (const { name } of dump.tables) {
    if (!existing.has(name)) throw new Error(`the dump has a table the schema lacks: ${name}`);
  }
  await db.transaction().execute(async (trx) => {
    const names = dump.tables.map((t) => t.name);
    const { rows: keys } = await sql<{ table: string; name: string; definition: string }>`
      select c.relname as table, k.conname as name, pg_get_constraintdef(k.oid) as definition
      from pg_constraint k join pg_class c on c.oid = k.conrelid
      where k.contype = 'f' and k.connamespace = current_schema()::regnamespace
    `.execute(trx);
    for (const name of names) {
      await sql`alter table ${sql.table(name)} disable trigger user`.execute(trx);
    }
    for (const key of keys) {
      await sql`alter table ${sql.table(key.table)} drop constraint ${sql.id(key.name)}`.execute(
        trx,
      );
    }
    // What the migrations wrote (the default team type, the catalogue's defaults) comes back
    // from the dump with whatever the administrators changed.
    if (names.length > 0) {
      await sql`truncate ${sql.join(names.map((n) => sql.table(n)))}`.execute(trx);
    }
    for (const { name } of dump.tables) {
      const { rows: columns } = await sql<{ name: string }>`
        select attname as name from pg_attribute
        where attrelid = quote_ident(${name})::regclass and attnum > 0 and not attisdropped and attgenerated = ''
        order by attnum
      `.execute(trx);
      const list = sql.join(columns.map((c) => sql.id(c.name)));
      for await (const batch of lines(join(dir, `${name}.jsonl`))) {
        await sql`insert into ${sql.table(name)} (${list}) overriding system value
          select ${list} from json_populate_recordset(null::${sql.table(name)}, ${`[${batch.join(",")}]`}::json)`.execute(
          trx,
        );
      }
    }
    for (const key of keys) {
      await sql`alter table ${sql.table(key.table)} add constraint ${sql.id(key.name)} ${sql.raw(key.definition)}`.execute(
        trx,
      );
    }
    for (const name of names) {
      await sql`alter table ${sql.table(name)} enable trigger user`.execute(trx);
    }
    for (const sequence of dump.sequences) {
      if (sequence.value === null) continue;
      await sql`select setval(quote_ident(${sequence.name})::regclass, ${sequence.value}::bigint, true)`.execute(
        trx,
      );
    }
  });
  check(await (await migrator(db)).migrateToLatest());
}
