// The team library's entries: read one, list a folder (or everything under it), save one (a
// file never where a folder is, nor a folder where a file is), delete one or a whole folder.
import { type Kysely, sql } from "kysely";
import type { Database, TeamLibraryEntryRow } from "./schema";
import { lockTeam } from "./teams/members";
import { findWhere } from "./rows";

export type LibraryEntrySummary = Omit<TeamLibraryEntryRow, "body" | "team_id">;

export async function findLibraryEntry(
  db: Kysely<Database>,
  teamId: string,
  type: string,
  path: string,
): Promise<TeamLibraryEntryRow | undefined> {
  return findWhere(db, "team_library_entries", { team_id: teamId, type, path });
}

/** Whether `path` starts with `prefix`, as a range of the (team, type, path) key. */
const under = (prefix: string) => sql<boolean>`path >= ${prefix} and starts_with(path, ${prefix})`;

/**
 * The entries whose path starts with `prefix` ("" for all, else a folder's path ending in `/`),
 * of one type or every type, in (type, path) order, without their bodies; `after` continues
 * after that (type, path); at most `limit` (all when none).
 */
export async function listLibraryEntries(
  db: Kysely<Database>,
  teamId: string,
  filter: { type?: string; prefix: string; after?: { type: string; path: string }; limit?: number },
): Promise<LibraryEntrySummary[]> {
  let query = db
    .selectFrom("team_library_entries")
    .select(["type", "path", "meta", "created_at", "updated_at"])
    .where("team_id", "=", teamId)
    .orderBy("type")
    .orderBy("path");
  if (filter.type !== undefined) query = query.where("type", "=", filter.type);
  if (filter.prefix !== "") query = query.where(under(filter.prefix));
  if (filter.after) {
    const { type, path } = filter.after;
    query = query.where(sql<boolean>`(type, path) > (${type}, ${path}::text collate "C")`);
  }
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  return query.execute();
}

/**
 * `full`: the team's library would hold more than its limits (`entries`, `bytes`: bodies and meta
 * together) with this entry, counted without the one it replaces.
 */
export type SaveLibraryResult =
  "saved" | "conflict" | "no_team" | { full: { entries: number; bytes: number } };

/**
 * Creates or replaces an entry. Refused (`conflict`) when a folder on its path is an entry, or
 * its path is a folder: either would leave something that cannot be reached. The team's row is
 * the lock, so two saves cannot together make such a pair.
 */
export async function saveLibraryEntry(
  trx: Kysely<Database>,
  entry: {
    teamId: string;
    type: string;
    path: string;
    meta: Record<string, unknown>;
    body: string;
  },
  limits: { entries: number; bytes: number },
): Promise<SaveLibraryResult> {
  if (!(await lockTeam(trx, entry.teamId))) return "no_team";
  const parts = entry.path.split("/");
  const folders = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
  let clashes = trx
    .selectFrom("team_library_entries")
    .select("path")
    .where("team_id", "=", entry.teamId)
    .where("type", "=", entry.type);
  clashes =
    folders.length > 0
      ? clashes.where((eb) => eb.or([eb("path", "in", folders), under(`${entry.path}/`)]))
      : clashes.where(under(`${entry.path}/`));
  const clash = await clashes.limit(1).executeTakeFirst();
  if (clash) return "conflict";
  // What the team holds besides this entry (under the team's lock, so two saves cannot together
  // pass the limits).
  const held = await trx
    .selectFrom("team_library_entries")
    .select([
      sql<number>`count(*)::int`.as("entries"),
      sql<string>`coalesce(sum(octet_length(body) + octet_length(meta::text)), 0)::text`.as(
        "bytes",
      ),
    ])
    .where("team_id", "=", entry.teamId)
    .where((eb) => eb.or([eb("type", "<>", entry.type), eb("path", "<>", entry.path)]))
    .executeTakeFirstOrThrow();
  const bytes =
    Number(held.bytes) +
    Buffer.byteLength(entry.body) +
    Buffer.byteLength(JSON.stringify(entry.meta));
  if (held.entries + 1 > limits.entries || bytes > limits.bytes) {
    return { full: { entries: held.entries, bytes: Number(held.bytes) } };
  }
  await trx
    .insertInto("team_library_entries")
    .values({
      team_id: entry.teamId,
      type: entry.type,
      path: entry.path,
      meta: JSON.stringify(entry.meta),
      body: entry.body,
    })
    .onConflict((oc) =>
      oc.columns(["team_id", "type", "path"]).doUpdateSet({
        meta: JSON.stringify(entry.meta),
        body: entry.body,
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();
  return "saved";
}

/**
 * Deletes the entry at `path`, or every entry in the folder `path`, of one type or (none given)
 * of every type: how many went.
 */
export async function deleteLibraryEntries(
  db: Kysely<Database>,
  teamId: string,
  type: string | undefined,
  path: string,
): Promise<number> {
  let query = db.deleteFrom("team_library_entries").where("team_id", "=", teamId);
  if (type !== undefined) query = query.where("type", "=", type);
  const result = await query
    .where((eb) => eb.or([eb("path", "=", path), under(`${path}/`)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
