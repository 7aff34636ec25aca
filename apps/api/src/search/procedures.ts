// Searching a team (FlowFuse's `forge/routes/api/search.js`): `GET /api/v1/search` finds its
// applications, instances and devices; `GET /api/v1/search/instances` its hosted instances (with
// their state) and devices, as FlowFuse's instance picker asks. The team is named by the query's
// `team`, as FlowFuse names it: a malformed one is 400 `bad_request`, another team's 404.
import {
  InstanceSearchResults,
  SEARCH_LIMIT,
  SearchInput,
  SearchResults,
} from "@flowplane/contract";
import { searchTeam, type TeamForUser } from "@flowplane/db";
import { applicationSummary } from "../applications/index";
import { type Context, procedure, router, teamOf } from "../core/trpc";
import { deviceSummary } from "../devices/index";
import { instanceStatusOf, instanceSummary } from "../instances/index";

const TAG = "Search";

const MATCHING = `Matches, in any case, applications by name or description, instances by name, devices by name or type, and each by its id; \`%\` and \`_\` in the query match themselves. A blank or absent \`query\` finds nothing (FlowFuse's). At most ${SEARCH_LIMIT} of each kind, by name.`;

/** What a search finds: nothing for a blank query, else the team's matches. */
async function find(
  ctx: Pick<Context, "db"> & { team: TeamForUser | undefined },
  input: SearchInput,
  kinds?: { applications: boolean },
) {
  const text = input.query?.trim() ?? "";
  if (text === "") return undefined;
  return searchTeam(ctx.db, teamOf(ctx).team.id, text, SEARCH_LIMIT, kinds);
}

export const searchRouter = router({
  team: procedure
    .meta({
      permission: "team:search",
      unseenIsNotFound: true,
      badTeamCode: "bad_request",
      openapi: {
        method: "GET",
        path: "/api/v1/search",
        tags: [TAG],
        summary: "Search a team's applications, instances and devices (viewers and up)",
        description: `${MATCHING} Each result is its list's summary with \`object\`: \`application\`, \`instance\` or \`device\`, in that order. A \`team\` missing or not an id is 400 \`bad_request\`; a team the caller is not in, 404 (FlowFuse answers it with no results).`,
      },
    })
    .input(SearchInput)
    .output(SearchResults)
    .query(async ({ ctx, input }) => {
      const found = await find(ctx, input);
      if (!found) return { count: 0, results: [] };
      const results = [
        ...found.applications.map((row) => ({
          object: "application" as const,
          ...applicationSummary(row, ctx.baseUrl),
        })),
        ...(await Promise.all(
          found.instances.map(async (row) => ({
            object: "instance" as const,
            ...(await instanceSummary(row, ctx)),
          })),
        )),
        ...found.devices.map((row) => ({
          object: "device" as const,
          ...deviceSummary(row, ctx.baseUrl),
        })),
      ];
      return { count: results.length, results };
    }),

  instances: procedure
    .meta({
      permission: "team:search",
      unseenIsNotFound: true,
      badTeamCode: "bad_request",
      openapi: {
        method: "GET",
        path: "/api/v1/search/instances",
        tags: [TAG],
        summary: "Search a team's hosted instances and devices (viewers and up)",
        description: `Instances (with their \`meta\`, \`instanceType: "hosted"\`) then devices (\`instanceType: "remote"\`), matched as \`GET /api/v1/search\` matches them. ${MATCHING} A \`team\` missing or not an id is 400 \`bad_request\`; a team the caller is not in, 404 (FlowFuse: 403).`,
      },
    })
    .input(SearchInput)
    .output(InstanceSearchResults)
    .query(async ({ ctx, input }) => {
      const found = await find(ctx, input, { applications: false });
      if (!found) return { count: 0, results: [] };
      const results = [
        ...(await Promise.all(
          found.instances.map(async (row) => ({
            ...(await instanceSummary(row, ctx)),
            meta: (await instanceStatusOf(row, ctx)).meta,
            instanceType: "hosted" as const,
          })),
        )),
        ...found.devices.map((row) => ({
          ...deviceSummary(row, ctx.baseUrl),
          instanceType: "remote" as const,
        })),
      ];
      return { count: results.length, results };
    }),
});
