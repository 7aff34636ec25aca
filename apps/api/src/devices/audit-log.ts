// A device's audit log (/devices/{id}/audit-log), read as the team's is, and as CSV.
import { DeviceAuditLogInput } from "@flowplane/contract";
import { entityAuditLog } from "../audit-log/index";
import { TAG } from "./procedures";

const log = entityAuditLog({
  permission: "device:audit-log",
  path: "/api/v1/devices/{deviceId}/audit-log",
  tag: TAG,
  summary: "A device's audit log",
  description:
    "Entries about the device: its creation, changes, credentials, targets, and what its agent and Node-RED report (`stopped`, `crashed`, `flows.set` …). Newest first, paged and filtered as the team's log.",
  input: DeviceAuditLogInput,
  of: ({ deviceId, ...filters }) => ({ of: { entity: { type: "device", id: deviceId } }, filters }),
});

/** The device's audit log and its CSV. */
export const deviceAuditLogProcedures = { auditLog: log.list, auditLogExport: log.export };
