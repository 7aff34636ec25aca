// The audit log area: reading the team's, the platform's and the caller's own log (written by
// every area through recordAudit in @flowplane/db), and the team's audit log page with its CSV.
import type { Area } from "../plugins/area";
import { auditLogPages } from "./pages/audit-log";
import { auditLogRouter } from "./procedures";

export const auditLog = {
  procedures: { auditLog: auditLogRouter },
  /** The team's audit log page, filtered and paged, and its CSV download. */
  pages: () => auditLogPages,
} satisfies Area;
export { entityAuditLog } from "./entity";
