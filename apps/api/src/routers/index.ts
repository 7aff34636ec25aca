import { router } from "../trpc";
import { settingsRouter } from "./settings";
import { teamRouter } from "./team";
import { tokenRouter } from "./token";
import { userRouter } from "./user";
import { usersRouter } from "./users";

export const appRouter = router({
  settings: settingsRouter,
  user: userRouter,
  users: usersRouter,
  team: teamRouter,
  token: tokenRouter,
});

export type AppRouter = typeof appRouter;
