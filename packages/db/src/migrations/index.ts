// Every migration, in order. Listed statically so that a bundled server carries them.
import type { Migration } from "kysely";
import * as foundation from "./2026-11-21T1200-foundation";
import * as accounts from "./2026-11-23T1200-accounts";
import * as teamSharing from "./2026-11-23T1300-team-sharing";
import * as auditLogReading from "./2026-11-23T1400-audit-log-reading";
import * as broker from "./2026-11-24T1200-broker";
import * as instances from "./2026-11-24T1300-instances";
import * as noEditorSessions from "./2026-11-24T1400-no-editor-sessions";
import * as snapshots from "./2026-11-25T1200-snapshots";
import * as devices from "./2026-11-25T1300-devices";
import * as deviceSnapshots from "./2026-11-25T1310-device-snapshots";
import * as deviceGroups from "./2026-11-25T1320-device-groups";
import * as teamLibrary from "./2026-11-25T1400-team-library";
import * as pipelines from "./2026-11-25T1410-pipelines";
import * as pipelineDeviceStages from "./2026-11-25T1430-pipeline-device-stages";
import * as editorSessions from "./2026-11-25T1600-editor-sessions";
import * as deviceReportedSettings from "./2026-11-25T1700-device-reported-settings";
import * as deviceOtc from "./2026-11-25T1710-device-otc";
import * as operationTargets from "./2026-11-25T1720-operation-targets";
import * as accessNotifications from "./2026-11-28T2100-access-notifications";
import * as editorAuthorizationCodes from "./2026-11-29T0300-editor-authorization-codes";
import * as platformSettings from "./2026-11-29T0500-platform-settings";
import * as deviceRegistrations from "./2026-11-29T0600-device-registrations";
import * as deviceChannel from "./2026-11-29T1100-device-channel";
import * as rollouts from "./2026-11-29T1800-rollouts";
import * as events from "./2026-11-29T2100-events";
import * as webhooks from "./2026-11-29T2110-webhooks";
import * as notifications from "./2026-11-29T2120-notifications";
import * as platformEvents from "./2026-11-29T2230-platform-events";
import * as pipelineStageWebhooks from "./2026-11-29T2240-pipeline-stage-webhooks";
import * as resourceVersions from "./2026-11-30T0100-resource-versions";
import * as idempotencyKeys from "./2026-11-30T0110-idempotency-keys";
import * as auditClientAddress from "./2026-11-30T0200-audit-client-address";

export const migrations: Record<string, Migration> = {
  "2026-11-21T1200-foundation": foundation,
  "2026-11-23T1200-accounts": accounts,
  "2026-11-23T1300-team-sharing": teamSharing,
  "2026-11-23T1400-audit-log-reading": auditLogReading,
  "2026-11-24T1200-broker": broker,
  "2026-11-24T1300-instances": instances,
  "2026-11-24T1400-no-editor-sessions": noEditorSessions,
  "2026-11-25T1200-snapshots": snapshots,
  "2026-11-25T1300-devices": devices,
  "2026-11-25T1310-device-snapshots": deviceSnapshots,
  "2026-11-25T1320-device-groups": deviceGroups,
  "2026-11-25T1400-team-library": teamLibrary,
  "2026-11-25T1410-pipelines": pipelines,
  "2026-11-25T1430-pipeline-device-stages": pipelineDeviceStages,
  "2026-11-25T1600-editor-sessions": editorSessions,
  "2026-11-25T1700-device-reported-settings": deviceReportedSettings,
  "2026-11-25T1710-device-otc": deviceOtc,
  "2026-11-25T1720-operation-targets": operationTargets,
  "2026-11-28T2100-access-notifications": accessNotifications,
  "2026-11-29T0300-editor-authorization-codes": editorAuthorizationCodes,
  "2026-11-29T0500-platform-settings": platformSettings,
  "2026-11-29T0600-device-registrations": deviceRegistrations,
  "2026-11-29T1100-device-channel": deviceChannel,
  "2026-11-29T1800-rollouts": rollouts,
  "2026-11-29T2100-events": events,
  "2026-11-29T2110-webhooks": webhooks,
  "2026-11-29T2120-notifications": notifications,
  "2026-11-29T2230-platform-events": platformEvents,
  "2026-11-29T2240-pipeline-stage-webhooks": pipelineStageWebhooks,
  "2026-11-30T0100-resource-versions": resourceVersions,
  "2026-11-30T0110-idempotency-keys": idempotencyKeys,
  "2026-11-30T0200-audit-client-address": auditClientAddress,
};
