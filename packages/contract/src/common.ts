// Building blocks every resource shares: ids, timestamps, links, list envelopes and paging input.
import { z } from "zod";

/**
 * Whether PostgreSQL's `text` can hold the string: no NUL, and valid UTF-16 (an unpaired surrogate
 * has no UTF-8 form). Anything else is storable and round-trips exactly.
 */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000") && value.isWellFormed();
}

/** The check every text input carries (a test walks the inputs to make sure of it). */
export const storableText = z.refine<string>(isStorableText, {
  message: "Contains a character that cannot be stored (NUL or an unpaired surrogate)",
  abort: true,
});

/**
 * Every text field, path and query parameter starts from this: a string PostgreSQL can store.
 * Give it a `max` where it is used.
 */
export const Text = z.string().check(storableText);

/** Opaque identifier: random base62, never sequential. */
export const Id = Text.min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "Not a valid id");

export const isId = (value: string): boolean => Id.safeParse(value).success;

/** ISO-8601 timestamp in UTC, as every time on the wire. */
export const Timestamp = z.iso.datetime();

export const Links = z
  .object({ self: z.string().describe("Absolute path of this resource in the API") })
  .meta({ id: "Links" });

/**
 * How far the platform-wide lists (every user, every team) count their matching rows: a page
 * never pays for reading a whole table it does not return.
 */
export const LIST_COUNT_CAP = 1000;

/** `count` of a platform-wide list: the matching rows, counted up to LIST_COUNT_CAP. */
export const CappedCount = z
  .number()
  .int()
  .describe(
    `Matching rows, counted up to ${LIST_COUNT_CAP}: ${LIST_COUNT_CAP} means at least that many (FlowFuse counts them all, which costs a scan of the whole table on every page)`,
  );

export const ListMeta = z
  .object({
    next_cursor: z
      .string()
      .optional()
      .describe("Pass as `cursor` to get the next page; absent on the last page"),
  })
  .meta({ id: "PaginationMeta" });

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** `limit` and `cursor` query parameters of every paged list. */
export const PageInput = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .describe(`How many items to return (1–${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE})`),
  cursor: Id.optional().describe("The `meta.next_cursor` of the previous page"),
};

/** A short human-readable name: trimmed, never blank. */
export const Name = Text.trim().min(1, "Must not be blank").max(128);

/** The reply of an operation that returns nothing else. */
export const Status = z.object({ status: z.literal("okay") }).meta({ id: "APIStatus" });
