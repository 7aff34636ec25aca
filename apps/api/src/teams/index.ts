// The teams area: teams and their lifecycle, members, invitations and team types, and the pages of
// a team's members and invitations, and of its settings; the confirmation page other areas' team
// pages use too.
import { deleteExpiredInvitations } from "@flowplane/db";
import type { Area } from "../plugins/area";
import { invitationRouter } from "./invitations";
import { memberRouter } from "./members";
import { memberPages } from "./pages/members";
import { settingsPages } from "./pages/settings";
import { teamRouter } from "./team";
import { teamTypesRouter } from "./team-types";

export const teams = {
  procedures: {
    team: teamRouter,
    teamTypes: teamTypesRouter,
    member: memberRouter,
    invitation: invitationRouter,
  },
  pages: () => (app, deps) => {
    memberPages(app, deps);
    settingsPages(app, deps);
  },
  sweep: async ({ db }) => {
    await deleteExpiredInvitations(db);
  },
} satisfies Area;
export { recordTeamDeleted } from "./events";
export { invitationView } from "./invitation-answers";
export { invitationRouter } from "./invitations";
export { roleLabel } from "./pages/roles";
export { teamPlace } from "./pages/team";
export { teamRouter } from "./team";
export { teamSummary } from "./views";
