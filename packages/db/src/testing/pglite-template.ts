// A migrated PGlite database as a file, made once and loaded by every test database after it.
// Creating PGlite runs initdb in WebAssembly and the migrations after it: seconds on a quiet
// machine, over a minute on a loaded one, paid by every test server. Loading the saved data
// directory skips both. The file is shared by every test process of the machine and named after
// what it holds (the migrations' code and the PGlite build), so a changed migration makes a new one.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import { migrateToLatest } from "../create-db";
import type { Database } from "../schema";
import { migrations } from "../migrations/index";

let loaded: Promise<Blob> | undefined;

/** The data directory of a freshly migrated database, as PGlite's `loadDataDir` takes it. */
export function migratedTemplate(): Promise<Blob> {
  loaded ??= readOrMake().catch((error: unknown) => {
    loaded = undefined;
    throw error;
  });
  return loaded;
}

function templatePath(): string {
  const hash = createHash("sha256");
  hash.update(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  for (const [name, migration] of Object.entries(migrations)) {
    hash.update(name).update(String(migration.up)).update(String(migration.down));
  }
  return join(tmpdir(), `flowplane-pglite-template-${hash.digest("hex").slice(0, 16)}.tar`);
}

async function readOrMake(): Promise<Blob> {
  const path = templatePath();
  try {
    // A copy: a Buffer may sit on a SharedArrayBuffer, which no Blob takes (Node 20 types).
    return new Blob([new Uint8Array(await readFile(path))]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const pglite = await PGlite.create();
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db);
    const dump = await pglite.dumpDataDir("none");
    // Written aside and renamed: a process that reads it meanwhile finds all of it or nothing.
    const partial = `${path}.${process.pid}`;
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
    await rename(partial, path);
    return dump;
  } finally {
    await db.destroy();
  }
}
