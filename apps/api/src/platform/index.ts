// The platform area: what the platform itself tells clients (GET /settings), what administrators
// change of it (PUT /settings) and see of it (/admin/stats, /admin/invitations), and the
// administrators' pages (/admin/…: users, teams, the catalogue, settings, audit log).
import type { Area } from "../plugins/area";
import { adminRouter } from "./admin";
import { adminPages } from "./pages/admin";
import { settingsRouter } from "./procedures";

export const platform = {
  procedures: { settings: settingsRouter, admin: adminRouter },
  pages: () => adminPages,
} satisfies Area;
export { settingsRouter } from "./procedures";
