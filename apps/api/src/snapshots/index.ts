// The snapshots area: snapshots of hosted instances (and, through the same routes, of devices) —
// taken, read, renamed, deleted, exported, imported and deployed; and a hosted instance's page,
// which shows its snapshots and the devices that follow it beside its state, log and variables.
import { ApiError } from "../core/errors";
import { router } from "../core/trpc";
import { devicePages } from "../devices/index";
import type { Area } from "../plugins/area";
import { instancePages } from "./pages/instance";
import { snapshotsRouter } from "./procedures";

// The procedures under the same names as the API's router (rate limits count by them).
const byName = router({ snapshots: snapshotsRouter });

export const snapshots = {
  procedures: { snapshots: snapshotsRouter },
  /**
   * A hosted instance's page: its state, log, variables, snapshots and devices; and a device's
   * page (the devices area's, registered here: it shows the device's snapshots, which that area
   * cannot read, as this one imports it).
   */
  pages: () => {
    const devicePage = devicePages({
      async list(context, deviceId) {
        try {
          const page = await byName
            .createCaller(context)
            .snapshots.ofDevice({ deviceId, limit: 20 });
          return page.snapshots;
        } catch (error) {
          if (error instanceof ApiError && error.apiCode === "invalid_device") return "instance";
          throw error;
        }
      },
      async take(context, deviceId, input) {
        await byName.createCaller(context).snapshots.createOfDevice({ deviceId, ...input });
      },
    });
    return (app, deps) => {
      instancePages(app, deps);
      devicePage(app, deps);
    };
  },
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
