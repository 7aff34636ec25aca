// A device's audit log (/devices/{id}/audit-log), read as the team's is, and as CSV.
import { AuditLog, DeviceAuditLogInput } from "@flowplane/contract";
import { z } from "zod";
import { auditLogCsv, readLog } from "../audit-log/procedures";
import { procedure } from "../core/trpc";
import { TAG } from "./procedures";

/** The device's audit log and its CSV. */
export const deviceAuditLogProcedures = {
  auditLog: procedure
    .meta({
      permission: "device:audit-log",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/audit-log",
        tags: [TAG],
        summary: "A device's audit log",
        description:
          "Entries about the device: its creation, changes, credentials, targets, and what its agent and Node-RED report (`stopped`, `crashed`, `flows.set` …). Newest first, paged and filtered as the team's log.",
      },
    })
    .input(DeviceAuditLogInput)
    .output(AuditLog)
    .query(async ({ ctx, input }) => {
      const { deviceId, ...filters } = input;
      return readLog(ctx.db, { entity: { type: "device", id: deviceId } }, filters);
    }),

  auditLogExport: procedure
    .meta({
      permission: "device:audit-log",
      contentType: "text/csv",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/audit-log/export",
        tags: [TAG],
        summary: "A device's audit log as CSV",
        description:
          "The same entries as the list with the same parameters, as CSV: header `id,event,body,scope,trigger,createdAt`, CRLF line ends, each cell the JSON of the field.",
      },
    })
    .input(DeviceAuditLogInput)
    .output(z.string())
    .query(async ({ ctx, input }) => {
      const { deviceId, ...filters } = input;
      const log = await readLog(ctx.db, { entity: { type: "device", id: deviceId } }, filters);
      return auditLogCsv(log.log);
    }),
};
