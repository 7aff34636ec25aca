import { router } from "../trpc";
import { auditLogRouter } from "./audit-log";
import { invitationRouter } from "./invitations";
import { memberRouter } from "./members";
import { settingsRouter } from "./settings";
import { teamRouter } from "./team";
import { teamTypesRouter } from "./team-types";
import { tokenRouter } from "./token";
import { userRouter } from "./user";
import { usersRouter } from "./users";

export const appRouter = router({
  settings: settingsRouter,
  user: userRouter,
  users: usersRouter,
  team: teamRouter,
  teamTypes: teamTypesRouter,
  token: tokenRouter,
  member: memberRouter,
  invitation: invitationRouter,
  auditLog: auditLogRouter,
});

export type AppRouter = typeof appRouter;
