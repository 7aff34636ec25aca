// The instances area: hosted Node-RED instances — their procedures, the runtime that runs them
// through a driver, the storage API their Node-RED calls (outside tRPC, with instance tokens), and
// their editors: opened on hosts of their own through the platform's proxy, signed in on the
// platform's page.
import { editorAuthorizeRoute } from "./editor-sign-in";
import { instancesRouter } from "./procedures";
import { INSTANCE_STORAGE, instanceStorageRoutes } from "./storage";

export const instances = {
  procedures: { instances: instancesRouter },
  /** Routes outside tRPC: what an instance's Node-RED calls. */
  routes: instanceStorageRoutes,
  /** The platform's page that signs a person into an editor (GET /account/authorize). */
  authorize: editorAuthorizeRoute,
  /** The paths those routes guard themselves. */
  ownPaths: INSTANCE_STORAGE,
};
export { InstanceRuntime } from "./runtime";
export { listeningUrl, runtimePlugin } from "./runtime-plugin";
export { type EditorHosts, editorHosts } from "./editor-hosts";
export { type EditorProxy, editorProxy } from "./editor-proxy";
export { startEditorSession } from "./editor-sign-in";
export {
  acceptInstanceConnection,
  onInstanceConnection,
  outsideInstanceRoutes,
} from "./platform-socket";
export { instancesRouter } from "./procedures";
export { instanceStatusOf, instanceSummary } from "./views";
