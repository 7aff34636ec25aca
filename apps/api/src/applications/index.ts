// The applications area: a team's applications, which hold its hosted instances, and the team's
// page that shows them.
import type { Area } from "../plugins/area";
import { teamPages } from "./pages/team";
import { applicationsRouter } from "./procedures";

export const applications = {
  procedures: { applications: applicationsRouter },
  pages: () => teamPages,
} satisfies Area;
export { applicationSummary, applicationsRouter } from "./procedures";
