// The snapshots area: snapshots of hosted instances (and, through the same routes, of devices) —
// taken, read, renamed, deleted, exported, imported and deployed.
import type { Area } from "../plugins/area";
import { snapshotsRouter } from "./procedures";

export const snapshots = {
  procedures: { snapshots: snapshotsRouter },
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
