// The token owner's own account: GET /user and GET /user/teams.
import { User, UserTeamList } from "@flowplane/contract";
import { findUser, listUserTeams } from "@flowplane/db";
import { z } from "zod";
import { procedure, router } from "../trpc";
import { userTeamView, userView } from "./views";

export const userRouter = router({
  me: procedure
    .meta({
      permission: "user:read",
      openapi: {
        method: "GET",
        path: "/api/v1/user",
        tags: ["User"],
        summary: "The token's owner",
      },
    })
    .input(z.void())
    .output(User)
    .query(async ({ ctx }) => {
      const user = await findUser(ctx.db, ctx.auth.userId);
      // The token lookup joined the user a moment ago; only a concurrent delete gets here.
      if (!user) throw new Error("token owner vanished");
      return userView(user, ctx.baseUrl);
    }),

  teams: procedure
    .meta({
      permission: "user:team:list",
      openapi: {
        method: "GET",
        path: "/api/v1/user/teams",
        tags: ["User"],
        summary: "The owner's teams, with their role in each",
        description:
          "A team-restricted token sees only the teams it is restricted to. Sorted by name.",
      },
    })
    .input(z.void())
    .output(UserTeamList)
    .query(async ({ ctx }) => {
      const rows = await listUserTeams(ctx.db, ctx.auth.userId, ctx.auth.scope.teamIds);
      return {
        meta: {},
        count: rows.length,
        teams: rows.map((row) => userTeamView(row, ctx.baseUrl)),
      };
    }),
});
