// The caller's own account: GET/PUT/DELETE /user, the password, and GET /user/teams.
import { hashPassword, verifyPassword } from "@flowplane/auth";
import {
  ChangePasswordInput,
  FRESH_SIGN_IN_MINUTES,
  Status,
  UpdateCurrentUserInput,
  User,
  UserTeamList,
} from "@flowplane/contract";
import {
  deleteUserSessions,
  findUser,
  listUserTeams,
  sessionStartedAt,
  updateUser,
  userTeamsIn,
} from "@flowplane/db";
import { z } from "zod";
import { changeAccount, checkPassword, deleteAccount } from "./rules";
import { ApiError, invalidRequest } from "../core/errors";
import { actorOf, type Context, procedure, router } from "../core/trpc";
import { recordUserEvent } from "./events";
import { userTeamView, userView } from "./views";

async function caller(ctx: Context) {
  const user = await findUser(ctx.db, ctx.auth.userId);
  // Authentication joined the user a moment ago; only a concurrent delete gets here.
  if (!user) throw new Error("caller vanished");
  return user;
}

/**
 * Whether the caller gave their password a moment ago: a session that signed in with an expired
 * password less than FRESH_SIGN_IN_MINUTES ago was started with that very password, so the forced
 * change that follows need not ask for it again. (A stolen older cookie still needs it.)
 */
export async function signedInJustNow(ctx: Pick<Context, "auth" | "db">): Promise<boolean> {
  if (ctx.auth.kind !== "session" || !ctx.auth.passwordExpired) return false;
  const started = await sessionStartedAt(ctx.db, ctx.auth.id);
  return started !== undefined && Date.now() - started.getTime() < FRESH_SIGN_IN_MINUTES * 60_000;
}

export const userRouter = router({
  me: procedure
    .meta({
      permission: "user:read",
      allowExpiredPassword: true,
      openapi: { method: "GET", path: "/api/v1/user", tags: ["User"], summary: "The caller" },
    })
    .input(z.void())
    .output(User)
    .query(async ({ ctx }) => userView(await caller(ctx), ctx.baseUrl)),

  update: procedure
    .meta({
      permission: "user:edit",
      rateLimit: { limit: "routes", always: false },
      openapi: {
        method: "PUT",
        path: "/api/v1/user",
        tags: ["User"],
        summary: "Change your name, username, email or default team",
        description:
          "A taken username is 400 `invalid_username`, a taken email 400 `invalid_email`, a default team you are not a member of 400 `invalid_team`.",
      },
    })
    .input(UpdateCurrentUserInput)
    .output(User)
    .mutation(async ({ ctx, input }) =>
      userView(await changeAccount(ctx, ctx.auth.userId, input), ctx.baseUrl),
    ),

  changePassword: procedure
    .meta({
      permission: "user:edit",
      rateLimit: { limit: "passwordChange", always: true },
      allowExpiredPassword: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/user/change_password",
        tags: ["User"],
        summary: "Change your password",
        description:
          "A wrong `old_password` is 400 `password_change_failed`, a weak new one 400 `password_change_failed_too_weak`. `old_password` may be left out only by a session that signed in with an expired password a few minutes ago (the forced change after signing in: the password was just given). Every other session of yours ends; your tokens keep working.",
      },
    })
    .input(ChangePasswordInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const user = await caller(ctx);
      if (input.old_password === undefined) {
        if (!(await signedInJustNow(ctx))) {
          throw invalidRequest("Give your current password", [
            { path: "old_password", message: "Required" },
          ]);
        }
      } else if (!(await verifyPassword(input.old_password, user.password_hash))) {
        throw new ApiError(400, "password_change_failed", "The current password is wrong", [
          { path: "old_password", message: "Wrong password" },
        ]);
      }
      checkPassword(input.password, user, "password_change_failed_too_weak");
      const unchanged =
        input.old_password === undefined
          ? await verifyPassword(input.password, user.password_hash)
          : input.password === input.old_password;
      if (unchanged) {
        throw new ApiError(
          400,
          "password_change_failed_too_weak",
          "The new password must differ from the old one",
          [{ path: "password", message: "Same as the old one" }],
        );
      }
      const passwordHash = await hashPassword(input.password);
      await ctx.db.transaction().execute(async (trx) => {
        await updateUser(trx, user.id, { password_hash: passwordHash, password_expired: false });
        // Anyone signed in with the old password is signed out; this browser stays signed in.
        await deleteUserSessions(
          trx,
          user.id,
          ctx.auth.kind === "session" ? ctx.auth.id : undefined,
        );
        await recordUserEvent(trx, "user.updated-password", actorOf(ctx), user);
      });
      // The first password's file goes once that password is no longer anyone's.
      await ctx.initialPassword?.replaced(user.password_hash).catch((error: unknown) => {
        ctx.log.warn({ err: error }, "could not remove the first password's file");
      });
      return { status: "okay" as const };
    }),

  signOutEverywhere: procedure
    .meta({
      permission: "user:edit",
      openapi: {
        method: "DELETE",
        path: "/api/v1/user/sessions",
        tags: ["User"],
        summary: "Sign out everywhere: end all your sessions, your tokens stay",
        description:
          "Flowplane's (FlowFuse has none). Ends every session of yours at once: signed-in browsers (this one too, when a browser asks) and the editors of hosted instances, whose open websockets close within seconds. Your personal access tokens stay: revoke those with `DELETE /api/v1/user/tokens/{id}`. Not with a token restricted to teams (403). Audit event `user.signed-out-everywhere`, with how many sessions ended.",
      },
    })
    .input(z.void())
    .output(Status)
    .mutation(async ({ ctx }) => {
      await ctx.db.transaction().execute(async (trx) => {
        const user = await findUser(trx, ctx.auth.userId);
        if (!user) throw new Error("caller vanished");
        const ended = await deleteUserSessions(trx, user.id);
        await recordUserEvent(trx, "user.signed-out-everywhere", actorOf(ctx), user, {
          sessions: ended,
        });
      });
      return { status: "okay" as const };
    }),

  delete: procedure
    .meta({
      permission: "user:delete",
      // The last active administrator; the only owner of a team with other members.
      errors: [400],
      openapi: {
        method: "DELETE",
        path: "/api/v1/user",
        tags: ["User"],
        summary: "Delete your account",
        description:
          "Deletes your tokens and sessions, and the teams you own alone (refused while such a team has other members). The last active administrator cannot be deleted.",
      },
    })
    .input(z.void())
    .output(Status)
    .mutation(async ({ ctx }) => {
      await deleteAccount(ctx, ctx.auth.userId);
      return { status: "okay" as const };
    }),

  teams: procedure
    .meta({
      permission: "user:team:list",
      openapi: {
        method: "GET",
        path: "/api/v1/user/teams",
        tags: ["User"],
        summary: "Your teams, with your role in each",
        description:
          "A team-restricted token sees only the teams it is restricted to. Sorted by name.",
      },
      preload: "userTeams",
    })
    .input(z.void())
    .output(UserTeamList)
    .query(async ({ ctx }) => {
      // Read with the token when the caller came through REST with one (one round trip).
      const rows = ctx.preloadedUserTeams
        ? userTeamsIn(ctx.preloadedUserTeams, ctx.auth.scope.teamIds)
        : await listUserTeams(ctx.db, ctx.auth.userId, ctx.auth.scope.teamIds);
      return {
        meta: {},
        count: rows.length,
        teams: rows.map((row) => userTeamView(row, ctx.baseUrl)),
      };
    }),
});
