// The team library area: the entries a team's Node-RED instances share — their procedures for
// scripts, and the routes Node-RED's library panel calls (outside tRPC, with instance tokens).
import { libraryRouter } from "./procedures";
import { LIBRARY_STORAGE, libraryStorageRoutes } from "./storage";

export const library = {
  procedures: { library: libraryRouter },
  /** Routes outside tRPC: the team library as Node-RED and signed-in people reach it. */
  routes: libraryStorageRoutes,
  /** The paths those routes guard themselves. */
  ownPaths: LIBRARY_STORAGE,
};
