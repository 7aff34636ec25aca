import { router } from "../trpc";
import { auditLogRouter } from "./audit-log";
import { brokerRouter } from "./broker";
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
  broker: brokerRouter,
});

export type AppRouter = typeof appRouter;
