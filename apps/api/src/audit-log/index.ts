// The audit log area: reading the team's, the platform's and the caller's own log (written by
// every area through recordAudit in @flowplane/db).
import type { Area } from "../plugins/area";
import { auditLogRouter } from "./procedures";

export const auditLog = {
  procedures: { auditLog: auditLogRouter },
} satisfies Area;
export { entityAuditLog } from "./entity";
