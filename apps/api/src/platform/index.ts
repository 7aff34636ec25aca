// The platform area: what the platform itself tells clients (GET /settings), what administrators
// change of it (PUT /settings) and see of it (/admin/stats, /admin/invitations).
import type { Area } from "../plugins/area";
import { adminRouter } from "./admin";
import { settingsRouter } from "./procedures";

export const platform = {
  procedures: { settings: settingsRouter, admin: adminRouter },
} satisfies Area;
export { settingsRouter } from "./procedures";
