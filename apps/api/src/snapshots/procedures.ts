// Snapshots of hosted instances (FlowFuse's /projects/{id}/snapshots) and devices, and the owner-agnostic
// /snapshots/{id} routes: members take them, viewers list and read them, owners rename and delete
// them. A snapshot's content never changes once taken; its secrets are sealed under its own key.
// The procedures live by route: instance.ts, device.ts, application.ts, by-id.ts, export-import.ts;
// what they share, records.ts.
import { router } from "../core/trpc";
import { applicationSnapshotProcedures } from "./application";
import { deviceSnapshotProcedures } from "./device";
import { snapshotByIdProcedures } from "./by-id";
import { snapshotTransferProcedures } from "./export-import";
import { flowImportProcedures } from "./flow-import";
import { instanceSnapshotProcedures } from "./instance";

export const snapshotsRouter = router({
  ...instanceSnapshotProcedures,
  ...snapshotByIdProcedures,
  ...snapshotTransferProcedures,
  ...deviceSnapshotProcedures,
  ...applicationSnapshotProcedures,
  ...flowImportProcedures,
});
