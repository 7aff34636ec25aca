// The team's instance counts (FlowFuse's /teams/{teamId}/instance-counts): its hosted instances or
// its devices by state, for the team's overview.
import { INSTANCE_COUNT_STATES, InstanceCounts, InstanceCountsInput } from "@flowplane/contract";
import { countTeamInstancesByState } from "@flowplane/db";
import { ApiError } from "../core/errors";
import { procedure } from "../core/trpc";

const KNOWN_STATES: ReadonlySet<string> = new Set(INSTANCE_COUNT_STATES);

export const instanceCountsProcedures = {
  instanceCounts: procedure
    .meta({
      permission: "team:read",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/instance-counts",
        tags: ["Applications"],
        summary: "How many of the team's instances or devices are in each state",
        description:
          "`instanceType=hosted` counts the team's hosted instances by the action under way (`starting`, `stopping` …) or else their state (`running`, `stopped`, `suspended`); `remote` counts its devices by the state their agent last reported, `unknown` for those that never connected. States with none are left out. An `applicationId` not the team's counts nothing. 400 `invalid_instance_type`, `invalid_state`, as FlowFuse's.",
      },
    })
    .input(InstanceCountsInput)
    .output(InstanceCounts)
    .query(async ({ ctx, input }) => {
      const kind = input.instanceType;
      if (kind !== "hosted" && kind !== "remote") {
        throw new ApiError(400, "invalid_instance_type", "Invalid instance type provided", [
          { path: "instanceType", message: "Must be `hosted` or `remote`" },
        ]);
      }
      const states = input.state === undefined ? [] : [input.state].flat();
      const unknown = states.find((state) => !KNOWN_STATES.has(state));
      if (unknown !== undefined) {
        throw new ApiError(400, "invalid_state", `Invalid state value: ${unknown}`, [
          { path: "state", message: "Not a state FlowFuse knows" },
        ]);
      }
      const rows = await countTeamInstancesByState(ctx.db, input.teamId, kind, {
        states,
        applicationId: input.applicationId,
      });
      return Object.fromEntries(rows.map((row) => [row.state || "unknown", row.count]));
    }),
};
