// What the team library's two doors share — Node-RED's (storage.ts, /storage/library/{teamId}/…)
// and the API's (procedures.ts, /api/v1/teams/{teamId}/library…): saving an entry with its audit
// entry, deleting an entry or a folder with its own, and reading a folder as Node-RED lists one.
import { type Db, deleteLibraryEntries, listLibraryEntries, saveLibraryEntry } from "@flowplane/db";
import { MAX_TEAM_LIBRARY_BYTES, MAX_TEAM_LIBRARY_ENTRIES } from "@flowplane/contract";
import { ApiError, notFound } from "../core/errors";
import { type LibraryActor, recordLibraryEvent } from "./events";

export type { LibraryActor };

export const invalidName = () =>
  new ApiError(
    400,
    "invalid_name",
    "Invalid entry name: a folder on its path is an entry, or it is a folder",
  );

const LIMITS = { entries: MAX_TEAM_LIBRARY_ENTRIES, bytes: MAX_TEAM_LIBRARY_BYTES };

/** A save the team's library has no room for: what it holds, and what to do. */
const libraryFull = (held: { entries: number; bytes: number }) =>
  new ApiError(
    413,
    "library_full",
    `The team library holds at most ${MAX_TEAM_LIBRARY_ENTRIES} entries and ${MAX_TEAM_LIBRARY_BYTES / 1_000_000} MB; it has ${held.entries} entries and ${(held.bytes / 1_000_000).toFixed(1)} MB, and this entry would take it past that: delete entries to make room`,
  );

export async function saveEntry(
  db: Db,
  teamId: string,
  entry: { type: string; path: string; meta: Record<string, unknown>; body: string },
  actor: LibraryActor,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const result = await saveLibraryEntry(trx, { teamId, ...entry }, LIMITS);
    if (result === "no_team") throw notFound();
    if (result === "conflict") throw invalidName();
    if (typeof result === "object") throw libraryFull(result.full);
    await recordLibraryEvent(trx, "saved", actor, teamId, entry);
  });
}

/**
 * Deletes an entry, or a folder and all in it, of one type or (none given, as FlowFuse) of every
 * type: how many entries went (none: 404).
 */
export async function deleteEntries(
  db: Db,
  teamId: string,
  entry: { type?: string; path: string },
  actor: LibraryActor,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const count = await deleteLibraryEntries(trx, teamId, entry.type, entry.path);
    if (count === 0) throw notFound();
    await recordLibraryEvent(trx, "deleted", actor, teamId, entry, { deleteCount: count });
    return count;
  });
}

/**
 * A folder as Node-RED's library lists one: its sub-folders' names, then its entries as
 * `{ fn, …meta, type, updatedAt }` (FlowFuse's shape).
 */
export async function readFolder(
  db: Db,
  teamId: string,
  type: string,
  folder: string,
): Promise<(string | Record<string, unknown>)[]> {
  const prefix = folder === "" ? "" : `${folder}/`;
  const rows = await listLibraryEntries(db, teamId, { type, prefix });
  const folders = new Set<string>();
  const files: Record<string, unknown>[] = [];
  for (const row of rows) {
    const rest = row.path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash >= 0) folders.add(rest.slice(0, slash));
    else
      files.push({
        ...row.meta,
        fn: rest,
        type: row.type,
        updatedAt: row.updated_at.toISOString(),
      });
  }
  return [...[...folders].sort(), ...files];
}
