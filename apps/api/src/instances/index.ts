// The instances area: hosted Node-RED instances — their procedures, the runtime that runs them
// through a driver, the storage API their Node-RED calls (outside tRPC, with instance tokens), and
// their editors: opened on hosts of their own through the platform's proxy, signed in on the
// platform's page.
import { deleteExpiredEditorCodes } from "@flowplane/db";
import type { Area, Platform } from "../plugins/area";
import { listeningUrl } from "../plugins/server";
import { editorHosts } from "./editor-hosts";
import { editorAuthorizeRoute, type EditorSignInOptions } from "./editor-sign-in";
import { instancesFrontDoor } from "./front-door";
import { instancesRouter } from "./procedures";
import { InstanceRuntime, runWithServer } from "./runtime";
import { instanceStorageRoutes } from "./storage";

/** An editor session lasts as Node-RED's own did (a day), or less when the platform's do. */
const signInOptions = ({ db, tokenSecret, authenticator, sessions, services }: Platform) =>
  ({
    db,
    tokenSecret,
    authenticator,
    editorSessionMaxAgeMs: Math.min(sessions.maxAgeMs, 24 * 3600_000),
    hosts: services.editorHosts!,
  }) satisfies EditorSignInOptions;

export const instances = {
  procedures: { instances: instancesRouter },
  frontDoor: instancesFrontDoor,
  async start(app, { options, db, tokenSecret, baseUrl }) {
    const hosts = editorHosts(baseUrl, options.editorDomain);
    // Instances reach the platform where it listens (loopback), not at its public BASE_URL.
    const runtime =
      options.instances &&
      new InstanceRuntime({
        db,
        driver: options.instances.driver,
        tokenSecret,
        log: app.log,
        platformUrl: () => listeningUrl(app),
        hosts,
        baseUrl,
      });
    if (runtime) runWithServer(app, runtime);
    return { editorHosts: hosts, instances: runtime };
  },
  /** What an instance's Node-RED calls, with the instance's own token. */
  machines: async (app, platform) => instanceStorageRoutes(app, signInOptions(platform)),
  /** The platform's page that signs a person into an editor (GET /account/authorize). */
  account: async (app, platform) => editorAuthorizeRoute(app, signInOptions(platform)),
  sweep: async ({ db }) => deleteExpiredEditorCodes(db),
} satisfies Area;
export { type EditorHosts, editorHosts } from "./editor-hosts";
export { startEditorSession } from "./editor-sign-in";
export { acceptInstanceConnection } from "./platform-socket";
export { instancesRouter } from "./procedures";
export { instanceStatusOf, instanceSummary } from "./views";
