// Team types (FlowFuse's `/team-types`): everyone may list and read them; administrators create,
// change and delete them. There is always at least one active type: new teams get the active type
// with the lowest `order` unless they choose one.
import {
  CreateTeamTypeInput,
  ListTeamTypesInput,
  Status,
  TeamType,
  TeamTypeIdInput,
  TeamTypeList,
  UpdateTeamTypeInput,
} from "@flowplane/contract";
import {
  deleteTeamType,
  findTeamType,
  insertTeamType,
  isForeignKeyViolation,
  isUniqueViolation,
  listTeamTypes,
  lockActiveTeamTypes,
  teamTypeTeamCount,
  updateTeamType,
} from "@flowplane/db";
import { ApiError, invalidRequest, notFound } from "../core/errors";
import { actorOf, procedure, router } from "../core/trpc";
import { recordTeamTypeEvent } from "./events";
import { teamTypeView } from "./views";

const nameTaken = () =>
  new ApiError(409, "invalid_name", "A team type with this name already exists", [
    { path: "name", message: "Already in use" },
  ]);

const invalidTeamType = (message: string) => new ApiError(400, "invalid_team_type", message);

const lastActive = (what: string) =>
  invalidTeamType(
    `The last active team type cannot be ${what}: new teams need one (make another type active first)`,
  );

const AUDIT_NOTE =
  "FlowFuse logs no event of its own for team types; this one is logged in the platform's log as `platform.team-type.";

export const teamTypesRouter = router({
  all: procedure
    .meta({
      permission: "team-type:list",
      openapi: {
        method: "GET",
        path: "/api/v1/team-types",
        tags: ["Team Types"],
        summary: "Team types, by ascending order",
        description: "Any signed-in caller. `filter` is `active` (default), `inactive` or `all`.",
      },
    })
    .input(ListTeamTypesInput)
    .output(TeamTypeList)
    .query(async ({ ctx, input }) => {
      const page = await listTeamTypes(ctx.db, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        types: page.types.map(teamTypeView),
      };
    }),

  byId: procedure
    .meta({
      permission: "team-type:read",
      openapi: {
        method: "GET",
        path: "/api/v1/team-types/{teamTypeId}",
        tags: ["Team Types"],
        summary: "One team type",
      },
    })
    .input(TeamTypeIdInput)
    .output(TeamType)
    .query(async ({ ctx, input }) => {
      const row = await findTeamType(ctx.db, input.teamTypeId);
      if (!row) throw notFound();
      return teamTypeView(row);
    }),

  create: procedure
    .meta({
      create: "replay",
      permission: "team-type:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/team-types",
        tags: ["Team Types"],
        summary: "Create a team type (administrators)",
        description: `Names are unique without regard to case: a taken one is 409 \`invalid_name\`. \`properties\` holds the limits of the type's teams (\`users\`, \`instances\`, \`devices\`, \`teamBroker.clients\`; a null or absent \`limit\` is no limit) and \`features\`; other keys are 400. ${AUDIT_NOTE}created\`.`,
      },
    })
    .input(CreateTeamTypeInput)
    .output(TeamType)
    .mutation(async ({ ctx, input }) => {
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const row = await insertTeamType(trx, input);
          await recordTeamTypeEvent(trx, "created", actorOf(ctx), row);
          return row;
        });
        return teamTypeView(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken();
        throw error;
      }
    }),

  update: procedure
    .meta({
      permission: "team-type:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/team-types/{teamTypeId}",
        tags: ["Team Types"],
        summary: "Change a team type (administrators)",
        description: `Changes the fields given (at least one); \`properties\` is replaced as a whole, and applies to the type's existing teams at once. A taken name is 409 \`invalid_name\`; making the last active type inactive is 400 \`invalid_team_type\`. ${AUDIT_NOTE}updated\`.`,
      },
    })
    .input(UpdateTeamTypeInput)
    .output(TeamType)
    .mutation(async ({ ctx, input }) => {
      const { teamTypeId, ...change } = input;
      try {
        const row = await ctx.db.transaction().execute(async (trx) => {
          const active = change.active === false ? await lockActiveTeamTypes(trx) : undefined;
          const before = await findTeamType(trx, teamTypeId);
          if (!before) throw notFound();
          if (Object.keys(change).length === 0) {
            throw invalidRequest("Nothing to change: give at least one field", [
              { path: "", message: "Give name, description, active, order or properties" },
            ]);
          }
          const updates = (Object.keys(change) as (keyof typeof change)[])
            .filter((key) => JSON.stringify(change[key]) !== JSON.stringify(before[key]))
            .map((key) => ({ key, old: before[key], new: change[key] }));
          if (updates.length === 0) return before;
          if (active && before.active && active.length === 1) throw lastActive("made inactive");
          const after = await updateTeamType(trx, teamTypeId, change);
          if (!after) throw notFound();
          await recordTeamTypeEvent(trx, "updated", actorOf(ctx), after, { updates });
          return after;
        });
        return teamTypeView(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken();
        throw error;
      }
    }),

  delete: procedure
    .meta({
      permission: "team-type:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/team-types/{teamTypeId}",
        tags: ["Team Types"],
        summary: "Delete a team type (administrators)",
        description: `Only a type no team has: otherwise 400 \`invalid_team_type\` (give its teams another type, or make it inactive so no new team chooses it). The last active type cannot be deleted either (400 \`invalid_team_type\`). ${AUDIT_NOTE}deleted\`.`,
      },
    })
    .input(TeamTypeIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      try {
        await ctx.db.transaction().execute(async (trx) => {
          const active = await lockActiveTeamTypes(trx);
          const type = await findTeamType(trx, input.teamTypeId);
          if (!type) throw notFound();
          if (type.active && active.length === 1) throw lastActive("deleted");
          const teams = await teamTypeTeamCount(trx, type.id);
          if (teams > 0) throw inUse(teams);
          if (!(await deleteTeamType(trx, type.id))) throw notFound();
          await recordTeamTypeEvent(trx, "deleted", actorOf(ctx), type);
        });
      } catch (error) {
        // A team given the type while this ran: the reference refuses the delete.
        if (isForeignKeyViolation(error)) throw inUse();
        throw error;
      }
      return { status: "okay" as const };
    }),
});

function inUse(teams?: number): ApiError {
  const which = teams === undefined ? "teams" : teams === 1 ? "1 team" : `${teams} teams`;
  return invalidTeamType(`The team type is in use by ${which}: it can only be deleted unused`);
}
