// Users, as platform administrators manage them (and each user their own record by id).
import { hashPassword } from "@flowplane/auth";
import {
  CreateUserInput,
  LIST_COUNT_CAP,
  ListUsersInput,
  Status,
  UpdateUserInput,
  User,
  UserIdInput,
  UserList,
  UserTeamList,
} from "@flowplane/contract";
import { findUser, insertUser, isUniqueViolation, listUserTeams, listUsers } from "@flowplane/db";
import {
  changeAccount,
  checkAvailable,
  checkPassword,
  deleteAccount,
  usernameTaken,
} from "./rules";
import { notFound } from "../core/errors";
import { actorOf, procedure, router } from "../core/trpc";
import { recordUserCreated } from "./events";
import { userTeamView, userView } from "./views";

export const usersRouter = router({
  all: procedure
    .meta({
      permission: "user:list",
      openapi: {
        method: "GET",
        path: "/api/v1/users",
        tags: ["Users"],
        summary: "Every user (administrators)",
        description: "Oldest first; `query` matches username, name or email in any case.",
      },
    })
    .input(ListUsersInput)
    .output(UserList)
    .query(async ({ ctx, input }) => {
      const page = await listUsers(ctx.db, input, LIST_COUNT_CAP);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        users: page.users.map((row) => userView(row, ctx.baseUrl)),
      };
    }),

  create: procedure
    .meta({
      create: "replay",
      permission: "user:create",
      openapi: {
        method: "POST",
        path: "/api/v1/users",
        tags: ["Users"],
        summary: "Create a user (administrators)",
        description:
          "A taken or reserved username (`admin`, `root` …) is 400 `invalid_username`; a taken email 400 `invalid_email`; a weak password 400 `invalid_request` naming `password`.",
      },
    })
    .input(CreateUserInput)
    .output(User)
    .mutation(async ({ ctx, input }) => {
      await checkAvailable(ctx.db, input);
      checkPassword(input.password, input);
      const passwordHash = await hashPassword(input.password);
      try {
        const user = await ctx.db.transaction().execute(async (trx) => {
          const user = await insertUser(trx, {
            username: input.username,
            name: input.name,
            email: input.email ?? null,
            admin: input.isAdmin ?? false,
            passwordHash,
          });
          await recordUserCreated(trx, actorOf(ctx), user);
          return user;
        });
        return userView(user, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw usernameTaken();
        throw error;
      }
    }),

  byId: procedure
    .meta({
      permission: "user:read",
      openapi: {
        method: "GET",
        path: "/api/v1/users/{userId}",
        tags: ["Users"],
        summary: "One user (administrators, or the user)",
      },
    })
    .input(UserIdInput)
    .output(User)
    .query(async ({ ctx, input }) => {
      const user = await findUser(ctx.db, input.userId);
      if (!user) throw notFound();
      return userView(user, ctx.baseUrl);
    }),

  update: procedure
    .meta({
      permission: "user:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/users/{userId}",
        tags: ["Users"],
        summary: "Change a user (administrators, or the user)",
        description:
          "`admin`, `suspended` and `password_expired` are for administrators (400 for others). Suspending ends the user's sessions and makes their tokens fail at once; the last active administrator cannot be suspended or demoted.",
      },
    })
    .input(UpdateUserInput)
    .output(User)
    .mutation(async ({ ctx, input }) => {
      const { userId, ...change } = input;
      return userView(await changeAccount(ctx, userId, change), ctx.baseUrl);
    }),

  delete: procedure
    .meta({
      permission: "user:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/users/{userId}",
        tags: ["Users"],
        summary: "Delete a user (administrators, or the user)",
        description:
          "Deletes their tokens and sessions, and the teams they own alone (refused while such a team has other members). The last active administrator cannot be deleted.",
      },
    })
    .input(UserIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await deleteAccount(ctx, input.userId);
      return { status: "okay" as const };
    }),

  teams: procedure
    .meta({
      permission: "user:team:list",
      openapi: {
        method: "GET",
        path: "/api/v1/users/{userId}/teams",
        tags: ["Users"],
        summary: "A user's teams (administrators, or the user)",
      },
    })
    .input(UserIdInput)
    .output(UserTeamList)
    .query(async ({ ctx, input }) => {
      if (!(await findUser(ctx.db, input.userId))) throw notFound();
      // Your own teams through a team-restricted token: only those it reaches.
      const restriction = input.userId === ctx.auth.userId ? ctx.auth.scope.teamIds : null;
      const rows = await listUserTeams(ctx.db, input.userId, restriction);
      return {
        meta: {},
        count: rows.length,
        teams: rows.map((row) => userTeamView(row, ctx.baseUrl)),
      };
    }),
});
