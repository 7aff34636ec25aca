import { router } from "../trpc";
import { applicationsRouter } from "./applications";
import { auditLogRouter } from "./audit-log";
import { brokerRouter } from "./broker";
import { projectTypesRouter, stacksRouter, templatesRouter } from "./catalogue";
import { instancesRouter } from "./instances";
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
  projectTypes: projectTypesRouter,
  stacks: stacksRouter,
  templates: templatesRouter,
  token: tokenRouter,
  member: memberRouter,
  invitation: invitationRouter,
  auditLog: auditLogRouter,
  broker: brokerRouter,
  applications: applicationsRouter,
  instances: instancesRouter,
});

export type AppRouter = typeof appRouter;
