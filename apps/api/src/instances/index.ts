// The instances area: hosted Node-RED instances — their procedures, the runtime that runs them
// through a driver, and the storage API their Node-RED calls (outside tRPC, with instance tokens).
import { instancesRouter } from "./procedures";
import { INSTANCE_STORAGE, instanceStorageRoutes } from "./storage";

export const instances = {
  procedures: { instances: instancesRouter },
  /** Routes outside tRPC: what an instance's Node-RED calls. */
  routes: instanceStorageRoutes,
  /** The paths those routes guard themselves. */
  ownPaths: INSTANCE_STORAGE,
};
export { InstanceRuntime } from "./runtime";
