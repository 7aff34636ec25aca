// The team library for scripts: `/api/v1/teams/{teamId}/library…` (FlowFuse has no such routes;
// its library is reached only through /storage/library, which storage.ts serves). Entries are
// named by type and path, in the query of reads and deletes and the body of a save.
import {
  DeleteLibraryEntryInput,
  LibraryDeleted,
  LibraryEntry,
  LibraryEntryInput,
  LibraryEntryList,
  ListLibraryInput,
  MAX_LIBRARY_BODY,
  MAX_TEAM_LIBRARY_BYTES,
  MAX_TEAM_LIBRARY_ENTRIES,
  SaveLibraryEntryInput,
} from "@flowplane/contract";
import { findLibraryEntry, listLibraryEntries, type TeamLibraryEntryRow } from "@flowplane/db";
import { invalidRequest, notFound } from "../core/errors";
import { actorOf, procedure, router, teamOf } from "../core/trpc";
import { deleteEntries, saveEntry } from "./entries";

const TAG = "Team Library";

function view(row: Omit<TeamLibraryEntryRow, "team_id" | "body">) {
  return {
    type: row.type,
    path: row.path,
    meta: row.meta,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** A cursor is the last entry's (type, path), opaque to clients. */
const cursorOf = (row: { type: string; path: string }) =>
  Buffer.from(JSON.stringify([row.type, row.path])).toString("base64url");

function afterCursor(cursor: string): { type: string; path: string } {
  try {
    const [type, path] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof type === "string" && typeof path === "string") return { type, path };
  } catch {
    // Refused below.
  }
  throw invalidRequest("Invalid request: cursor: Not a cursor of this list", [
    { path: "cursor", message: "Not a cursor of this list" },
  ]);
}

export const libraryRouter = router({
  list: procedure
    .meta({
      permission: "library:entry:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/library",
        tags: [TAG],
        summary: "Entries of the team library (viewers and up)",
        description:
          "Every entry in the folder `path` and below it (all when none), of one `type` or every type, without their bodies, in (type, path) order; pass `meta.next_cursor` as `cursor` for the next page. The same entries every instance of the team shows in its Node-RED library panel as the Team Library. FlowFuse has no such route (its library is reached only from Node-RED).",
      },
    })
    .input(ListLibraryInput)
    .output(LibraryEntryList)
    .query(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const rows = await listLibraryEntries(ctx.db, teamId, {
        type: input.type,
        prefix: input.path ? `${input.path}/` : "",
        after: input.cursor === undefined ? undefined : afterCursor(input.cursor),
        limit: input.limit + 1,
      });
      const page = rows.slice(0, input.limit);
      const more = rows.length > input.limit;
      return {
        meta: more ? { next_cursor: cursorOf(page[page.length - 1]!) } : {},
        count: page.length,
        entries: page.map(view),
      };
    }),

  get: procedure
    .meta({
      permission: "library:entry:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/library/entry",
        tags: [TAG],
        summary: "An entry of the team library, with its body (viewers and up)",
        description: "404 when the team's library has no entry of that type at that path.",
      },
    })
    .input(LibraryEntryInput)
    .output(LibraryEntry)
    .query(async ({ ctx, input }) => {
      const row = await findLibraryEntry(ctx.db, teamOf(ctx).team.id, input.type, input.path);
      if (!row) throw notFound();
      return { ...view(row), body: row.body };
    }),

  save: procedure
    .meta({
      permission: "library:entry:create",
      errors: [413],
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/library/entry",
        tags: [TAG],
        summary: "Save an entry in the team library (members and owners)",
        description:
          "Creates the entry, or replaces its body and meta. A flow's body is its JSON. Every instance of the team reads it from its library panel at once. 400 `invalid_name` when a folder on its path is an entry, or its path is a folder (FlowFuse's rule). " +
          `A body is at most ${MAX_LIBRARY_BODY} characters (400 naming \`body\`); a team's library holds at most ${MAX_TEAM_LIBRARY_ENTRIES} entries and ${MAX_TEAM_LIBRARY_BYTES / 1_000_000} MB of bodies and meta together: a save past either is 413 \`library_full\` (Flowplane's: FlowFuse sets no limit), and nothing changes. ` +
          "Audit event `team.library.entry.saved`.",
      },
    })
    .input(SaveLibraryEntryInput)
    .output(LibraryEntry)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const { type, path, body } = input;
      await saveEntry(ctx.db, teamId, { type, path, meta: input.meta ?? {}, body }, actorOf(ctx));
      const row = await findLibraryEntry(ctx.db, teamId, type, path);
      if (!row) throw notFound();
      return { ...view(row), body: row.body };
    }),

  delete: procedure
    .meta({
      permission: "library:entry:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/library/entry",
        tags: [TAG],
        summary: "Delete an entry, or a whole folder, of the team library (members and owners)",
        description:
          "`path` names an entry, or a folder: every entry in it goes, of `type` or, without it, of every type (as FlowFuse). `deleteCount` says how many; 404 when there was none. Every instance's library panel stops showing them at once. Audit event `team.library.entry.deleted`.",
      },
    })
    .input(DeleteLibraryEntryInput)
    .output(LibraryDeleted)
    .mutation(async ({ ctx, input }) => {
      const deleteCount = await deleteEntries(
        ctx.db,
        teamOf(ctx).team.id,
        { type: input.type, path: input.path },
        actorOf(ctx),
      );
      return { status: "okay" as const, deleteCount };
    }),
});
