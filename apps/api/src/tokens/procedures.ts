// Personal access tokens of the caller. Every request is made with a token, so a token creates,
// changes and revokes tokens: never one broader than itself, and revoking a token revokes every
// token created with it (Vault's token hierarchy).
import {
  generateToken,
  narrowScope,
  type ScopeViolation,
  scopeViolation,
  tokenDigest,
  type TokenScope,
} from "@flowplane/auth";
import {
  CreatedToken,
  CreateTokenInput,
  TokenIdInput,
  TokenList,
  TokenSummary,
  UpdateTokenInput,
} from "@flowplane/contract";
import {
  deleteToken,
  findTokenScope,
  findTokenSummary,
  insertToken,
  listTokens,
  memberTeamIds,
  tokenDescendants,
  updateToken,
} from "@flowplane/db";
import { z } from "zod";
import { ApiError, forbidden, invalidRequest, notFound } from "../core/errors";
import { actorOf, type Context, procedure, router } from "../core/trpc";
import { recordTokenCreated, recordTokenDeleted, recordTokenUpdated } from "./events";
import { tokenView } from "./views";

const TOO_BROAD: Record<ScopeViolation, string> = {
  read_only: "a read-only token cannot grant writes",
  admin_opt_in: "admin opt-in needs a token that has it",
  teams: "the teams must be among the token's own",
  expiry: "the expiry must not be later than the token's own",
};

function checkWithin(child: TokenScope, parent: TokenScope, whose: string) {
  const violation = scopeViolation(child, parent);
  if (violation) {
    throw forbidden(
      `The token would be broader than ${whose}: ${TOO_BROAD[violation]}`,
      "forbidden",
    );
  }
}

function expiryDate(value: number | string, path: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalidRequest("expiresAt is not a valid time");
  if (date.getTime() <= Date.now()) {
    throw invalidRequest("expiresAt must be in the future", [{ path, message: "In the past" }]);
  }
  return date;
}

/** `teamIds` as given ([] or absent: every team) after checking the caller belongs to each. */
async function teamScope(ctx: Context, teamIds: string[]): Promise<string[] | null> {
  if (teamIds.length === 0) return null;
  const unique = [...new Set(teamIds)].sort();
  const member = new Set(await memberTeamIds(ctx.db, ctx.auth.userId, unique));
  const foreign = unique.filter((id) => !member.has(id));
  if (foreign.length > 0) {
    throw new ApiError(400, "invalid_team", `Not a member of team ${foreign.join(", ")}`, [
      { path: "teamIds", message: "Not a team you are a member of" },
    ]);
  }
  return unique;
}

function checkAdminOptIn(ctx: Context, scope: TokenScope) {
  if (scope.adminOptIn && !ctx.auth.admin) {
    throw forbidden("Only administrators can create admin opt-in tokens");
  }
  // Administration is the whole platform's, never a few teams' (an existing token that has both
  // anyway does not act as administrator: `actsAsAdmin`).
  if (scope.adminOptIn && scope.teamIds !== null) {
    throw invalidRequest(
      "A token restricted to teams cannot opt in to administration: give no teamIds, or no adminOptIn",
      [{ path: "adminOptIn", message: "Not with a team restriction" }],
    );
  }
}

const actor = actorOf;

/** The user's token `id`, which the calling token must be allowed to manage. */
async function managedToken(ctx: Context, id: string) {
  const target = await findTokenScope(ctx.db, ctx.auth.userId, id);
  if (!target) throw notFound();
  if (target.id !== ctx.auth.tokenId && scopeViolation(target, ctx.auth.scope)) {
    throw forbidden("A token can only manage tokens no broader than itself", "forbidden");
  }
  return target;
}

export const tokenRouter = router({
  all: procedure
    .meta({
      permission: "user:token:list",
      openapi: {
        method: "GET",
        path: "/api/v1/user/tokens",
        tags: ["Tokens"],
        summary: "The caller's personal access tokens, never their values",
      },
    })
    .input(z.void())
    .output(TokenList)
    .query(async ({ ctx }) => {
      const rows = await listTokens(ctx.db, ctx.auth.userId);
      return { meta: {}, count: rows.length, tokens: rows.map(tokenView) };
    }),

  create: procedure
    .meta({
      create: "secret",
      permission: "user:token:edit",
      rateLimit: { limit: "routes", always: false },
      openapi: {
        method: "POST",
        path: "/api/v1/user/tokens",
        tags: ["Tokens"],
        summary: "Create a personal access token; its value is in this reply only",
        description:
          "FlowFuse refuses this to token callers; here every caller is a token, so a token may create tokens no broader than itself (scope, teams and expiry within its own; absent fields inherit them). Revoking a token revokes the tokens created with it. `adminOptIn` (administrators only) and `teamIds` exclude each other (400): a token restricted to teams never acts as administrator.",
      },
    })
    .input(CreateTokenInput)
    .output(CreatedToken)
    .mutation(async ({ ctx, input }) => {
      const scope: TokenScope = {
        readOnly: input.readOnly ?? false,
        adminOptIn: input.adminOptIn ?? false,
        teamIds:
          input.teamIds === undefined
            ? ctx.auth.scope.teamIds
            : await teamScope(ctx, input.teamIds),
        expiresAt:
          input.expiresAt === undefined
            ? ctx.auth.scope.expiresAt
            : expiryDate(input.expiresAt, "expiresAt"),
      };
      checkAdminOptIn(ctx, scope);
      checkWithin(scope, ctx.auth.scope, "the token creating it");

      const value = generateToken("personalAccessToken");
      const summary = await ctx.db.transaction().execute(async (trx) => {
        const row = await insertToken(trx, {
          userId: ctx.auth.userId,
          parentId: ctx.auth.tokenId,
          name: input.name,
          digest: tokenDigest(ctx.tokenSecret, value),
          scope,
        });
        await recordTokenCreated(trx, actor(ctx), ctx.auth.userId, row, scope);
        return (await findTokenSummary(trx, ctx.auth.userId, row.id))!;
      });
      return { ...tokenView(summary), token: value };
    }),

  update: procedure
    .meta({
      permission: "user:token:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/user/tokens/{id}",
        tags: ["Tokens"],
        summary: "Change a token's name, scope or expiry",
        description:
          "Absent fields are unchanged (FlowFuse clears the expiry when `expiresAt` is absent; here `expiresAt: null` does). `teamIds: []` lifts the team restriction. The result must stay within the calling token and the token that created the changed one; tokens created with it are narrowed to fit.",
      },
    })
    .input(UpdateTokenInput)
    .output(TokenSummary)
    .mutation(async ({ ctx, input }) => {
      const { id, ...changes } = input;
      const target = await managedToken(ctx, id);
      if (Object.values(changes).every((value) => value === undefined)) {
        throw invalidRequest("Nothing to change: give at least one field", [
          { path: "", message: "Give name, expiresAt, readOnly, teamIds or adminOptIn" },
        ]);
      }
      const scope: TokenScope = {
        readOnly: input.readOnly ?? target.readOnly,
        adminOptIn: input.adminOptIn ?? target.adminOptIn,
        teamIds: input.teamIds === undefined ? target.teamIds : await teamScope(ctx, input.teamIds),
        expiresAt:
          input.expiresAt === undefined
            ? target.expiresAt
            : input.expiresAt === null
              ? null
              : expiryDate(input.expiresAt, "expiresAt"),
      };
      checkAdminOptIn(ctx, scope);
      checkWithin(scope, ctx.auth.scope, "the calling token");
      if (target.parentId) {
        const parent = await findTokenScope(ctx.db, ctx.auth.userId, target.parentId);
        if (parent) checkWithin(scope, parent, "the token that created it");
      }
      const name = input.name ?? target.name;

      const summary = await ctx.db.transaction().execute(async (trx) => {
        await updateToken(trx, target.id, { name, scope });
        // Keep every descendant within its parent: narrow them top-down.
        const scopes = new Map<string, TokenScope>([[target.id, scope]]);
        for (const child of await tokenDescendants(trx, target.id)) {
          const narrowed = narrowScope(child, scopes.get(child.parentId!)!);
          scopes.set(child.id, narrowed);
          if (scopeViolation(child, narrowed)) {
            await updateToken(trx, child.id, { name: child.name, scope: narrowed });
          }
        }
        await recordTokenUpdated(trx, actor(ctx), ctx.auth.userId, target, { name, scope });
        return (await findTokenSummary(trx, ctx.auth.userId, target.id))!;
      });
      return tokenView(summary);
    }),

  delete: procedure
    .meta({
      permission: "user:token:edit",
      successStatus: 204,
      openapi: {
        method: "DELETE",
        path: "/api/v1/user/tokens/{id}",
        tags: ["Tokens"],
        summary: "Revoke a token and every token created with it",
        description: "204 on success; the token is refused from the next request on.",
      },
    })
    .input(TokenIdInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      const target = await managedToken(ctx, input.id);
      await ctx.db.transaction().execute(async (trx) => {
        const descendants = await tokenDescendants(trx, target.id);
        await deleteToken(trx, target.id);
        await recordTokenDeleted(trx, actor(ctx), ctx.auth.userId, target, descendants);
      });
    }),
});
