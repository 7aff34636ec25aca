import { router } from "../trpc";
import { teamRouter } from "./team";
import { tokenRouter } from "./token";
import { userRouter } from "./user";

export const appRouter = router({
  user: userRouter,
  team: teamRouter,
  token: tokenRouter,
});

export type AppRouter = typeof appRouter;
