// The team library (FlowFuse's `shared-library`): flows, functions and templates that every
// Node-RED instance of a team sees in its library panel, and that scripts read and write here.
import { z } from "zod";
import { freeForm } from "./catalogue";
import { Id, ListMeta, Text, Timestamp } from "./common";

/** The name Node-RED's library panel knows the team library by (FlowFuse's). */
export const TEAM_LIBRARY_SOURCE = "flowforge-team-library";

/** The most an entry's body may hold (its text; a flow's JSON), within the API's body limit. */
export const MAX_LIBRARY_BODY = 1_000_000;

/** The most a team's library may hold: its entries' bodies and meta together, in bytes. */
export const MAX_TEAM_LIBRARY_BYTES = 25_000_000;

/** The most entries a team's library may hold. */
export const MAX_TEAM_LIBRARY_ENTRIES = 5_000;

export const LibraryType = Text.max(64)
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "1 to 64 letters, digits, '_' or '-'")
  .describe("Node-RED's library type: `flows`, `functions`, `templates`, …");

/** Why a path is refused, or undefined: segments separated by `/`, none empty, `.` or `..`. */
export function libraryPathProblem(path: string): string | undefined {
  if (path.length > 1024) return "At most 1024 characters";
  const segments = path.split("/");
  if (segments.some((segment) => segment === ""))
    return "No empty segment, nor a leading or trailing '/'";
  if (segments.some((segment) => segment === "." || segment === ".."))
    return "No '.' or '..' segment";
  return undefined;
}

const checkedPath = (schema: z.ZodString) =>
  schema.superRefine((value, ctx) => {
    const problem = value === "" ? undefined : libraryPathProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const LibraryPath = checkedPath(Text.min(1, "Must not be blank").max(1024)).describe(
  "The entry's path within its type: `folder/name`",
);

export const LibraryFolder = checkedPath(Text.max(1024)).describe(
  "A folder: `folder/sub`; empty for the top",
);

export const LibraryMeta = freeForm().describe(
  "What Node-RED keeps beside the body (a function's `outputs`, …): free-form, at most 100 keys, 64 KiB",
);

export const LibraryEntrySummary = z
  .object({
    type: z.string(),
    path: z.string(),
    meta: z.record(z.string(), z.unknown()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "LibraryEntrySummary" });
export type LibraryEntrySummary = z.infer<typeof LibraryEntrySummary>;

export const LibraryEntry = LibraryEntrySummary.extend({
  body: z.string().describe("The entry's text: a flow's is its JSON"),
}).meta({ id: "LibraryEntry" });
export type LibraryEntry = z.infer<typeof LibraryEntry>;

export const LibraryEntryList = z
  .object({ meta: ListMeta, count: z.number().int(), entries: z.array(LibraryEntrySummary) })
  .meta({ id: "LibraryEntryList" });

export const ListLibraryInput = z.strictObject({
  teamId: Id,
  type: LibraryType.optional().describe("Only entries of this type"),
  path: LibraryFolder.optional().describe("Only entries in this folder and below it"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe("How many entries to return (1–1000, default 100)"),
  cursor: Text.max(2048).optional().describe("The `meta.next_cursor` of the previous page"),
});

export const LibraryEntryInput = z.strictObject({
  teamId: Id,
  type: LibraryType,
  path: LibraryPath,
});

export const SaveLibraryEntryInput = z.strictObject({
  teamId: Id,
  type: LibraryType,
  path: LibraryPath,
  meta: LibraryMeta.optional().describe("Replaces the entry's meta (none: `{}`)"),
  body: Text.max(MAX_LIBRARY_BODY).describe(
    "The entry's text; a flow's is its JSON (an array of nodes)",
  ),
});

export const DeleteLibraryEntryInput = LibraryEntryInput.extend({
  type: LibraryType.optional().describe(
    "Only entries of this type; absent: the entry or folder goes whatever its type (FlowFuse's)",
  ),
  path: LibraryPath.describe("An entry, or a folder: all of it goes"),
});

export const LibraryDeleted = z
  .object({ status: z.literal("okay"), deleteCount: z.number().int() })
  .meta({ id: "LibraryDeleted" });
