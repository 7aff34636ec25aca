// Searching a team (FlowFuse's `/api/v1/search`): its applications, instances and devices whose
// name (or id, description, type, as FlowFuse matches them) contains the query, in any case.
import { z } from "zod";
import { ApplicationSummary } from "./applications";
import { Id, Text } from "./common";
import { DeviceSummary } from "./devices";
import { InstanceMeta, InstanceSummary } from "./instances";

/** At most this many of each kind of result (FlowFuse sets none). */
export const SEARCH_LIMIT = 100;

export const SearchInput = z.strictObject({
  team: Id.describe("The team to search (FlowFuse's `team`: its id)"),
  query: Text.max(256)
    .optional()
    .describe(
      "The text to find, any case, `%` and `_` matching themselves; blank or absent finds nothing",
    ),
});
export type SearchInput = z.infer<typeof SearchInput>;

export const SearchResult = z
  .union([
    ApplicationSummary.extend({ object: z.literal("application") }),
    InstanceSummary.extend({ object: z.literal("instance") }),
    DeviceSummary.extend({ object: z.literal("device") }),
  ])
  .describe("An application, instance or device, as its lists show it, and which (`object`)");
export type SearchResult = z.infer<typeof SearchResult>;

export const SearchResults = z
  .object({ count: z.number().int(), results: z.array(SearchResult) })
  .meta({ id: "SearchResults" });
export type SearchResults = z.infer<typeof SearchResults>;

export const InstanceSearchResult = z
  .union([
    InstanceSummary.extend({ meta: InstanceMeta, instanceType: z.literal("hosted") }),
    DeviceSummary.extend({ instanceType: z.literal("remote") }),
  ])
  .describe("A hosted instance with its state (`hosted`), or a device (`remote`)");

export const InstanceSearchResults = z
  .object({ count: z.number().int(), results: z.array(InstanceSearchResult) })
  .meta({ id: "InstanceSearchResults" });
export type InstanceSearchResults = z.infer<typeof InstanceSearchResults>;
