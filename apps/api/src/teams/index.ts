// The teams area: teams and their lifecycle, members, invitations and team types, and the pages of
// a team's members and invitations.
import { deleteExpiredInvitations } from "@flowplane/db";
import type { Area } from "../plugins/area";
import { invitationRouter } from "./invitations";
import { memberRouter } from "./members";
import { memberPages } from "./pages/members";
import { teamRouter } from "./team";
import { teamTypesRouter } from "./team-types";

export const teams = {
  procedures: {
    team: teamRouter,
    teamTypes: teamTypesRouter,
    member: memberRouter,
    invitation: invitationRouter,
  },
  pages: () => memberPages,
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
