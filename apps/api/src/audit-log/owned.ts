// An application's and an instance's audit logs (FlowFuse's /applications/{id}/audit-log and
// /projects/{id}/audit-log): the entries about it, or with `scope` about its instances or devices,
// and with `includeChildren` about those below it too.
import { ApplicationAuditLogInput, InstanceAuditLogInput } from "@flowplane/contract";
import type { EntitySet } from "@flowplane/db";
import { entityAuditLog } from "./entity";
import { PAGING } from "./read";

const children = (flag: string | undefined) => flag === "true" || flag === "1";

/** The entities an application's log reads, as FlowFuse picks them. */
export function applicationEntities(
  applicationId: string,
  scope: "application" | "project" | "device" = "application",
  includeChildren = false,
): EntitySet[] {
  const instances: EntitySet = { type: "project", ofApplication: applicationId };
  const ownDevices: EntitySet = { type: "device", ofApplication: applicationId };
  const instanceDevices: EntitySet = { type: "device", ofApplicationInstances: applicationId };
  if (scope === "device") return [ownDevices];
  if (scope === "project") return includeChildren ? [instances, instanceDevices] : [instances];
  const itself: EntitySet = { type: "application", id: applicationId };
  return includeChildren ? [itself, instances, ownDevices, instanceDevices] : [itself];
}

/** The entities an instance's log reads. */
export function instanceEntities(
  instanceId: string,
  scope: "project" | "device" = "project",
  includeChildren = false,
): EntitySet[] {
  const devices: EntitySet = { type: "device", ofProject: instanceId };
  if (scope === "device") return [devices];
  const itself: EntitySet = { type: "project", id: instanceId };
  return includeChildren ? [itself, devices] : [itself];
}

const application = entityAuditLog({
  permission: "application:audit-log",
  path: "/api/v1/applications/{applicationId}/audit-log",
  tag: "Audit log",
  summary: "An application's audit log (owners)",
  description: `Entries about the application (\`application.created\`, \`application.updated\`, its pipelines, device groups and device snapshots); \`scope=project\` its instances' entries, \`scope=device\` its devices'; \`includeChildren=true\` adds those below the scope (an application's instances and devices, an instance's devices), as FlowFuse's. Entries of an instance or device since deleted are no longer in it (the team's log keeps them). ${PAGING} FlowFuse's \`associations\` are not given.`,
  input: ApplicationAuditLogInput,
  of: ({ applicationId, scope, includeChildren, ...filters }) => ({
    of: { entities: applicationEntities(applicationId, scope, children(includeChildren)) },
    filters,
  }),
});

const instance = entityAuditLog({
  permission: "project:audit-log",
  path: "/api/v1/projects/{instanceId}/audit-log",
  tag: "Audit log",
  summary: "An instance's audit log (viewers and up)",
  description: `Entries about the instance: created, started, stopped, restarted, settings changed, its snapshots, rollbacks, flows imported, pipeline deploys; \`scope=device\` its devices' entries, \`includeChildren=true\` both, as FlowFuse's. ${PAGING} FlowFuse's \`associations\` are not given.`,
  input: InstanceAuditLogInput,
  of: ({ instanceId, scope, includeChildren, ...filters }) => ({
    of: { entities: instanceEntities(instanceId, scope, children(includeChildren)) },
    filters,
  }),
});

export const ownedAuditLogProcedures = {
  application: application.list,
  applicationExport: application.export,
  instance: instance.list,
  instanceExport: instance.export,
};
