// The applications area: a team's applications, which hold its hosted instances.
import { applicationsRouter } from "./procedures";

export const applications = {
  procedures: { applications: applicationsRouter },
};
