// The snapshots area: snapshots of hosted instances (and, through the same routes, of devices) —
// taken, read, renamed, deleted, exported, imported and deployed; and a hosted instance's page,
// which shows its snapshots and the devices that follow it beside its state, log and variables.
import type { Area } from "../plugins/area";
import { instancePages } from "./pages/instance";
import { snapshotsRouter } from "./procedures";

export const snapshots = {
  procedures: { snapshots: snapshotsRouter },
  /** A hosted instance's page: its state, log, variables, snapshots and devices. */
  pages: () => instancePages,
} satisfies Area;
export {
  contentOf,
  contentOfInstance,
  deployedState,
  type InstanceState,
  type SnapshotContent,
  writeOntoInstance,
} from "./content";
export { recordInstanceDeviceTarget, storeInstanceSnapshot } from "./records";
export { snapshotsRouter } from "./procedures";
