// The team library area: the entries a team's Node-RED instances share — their procedures for
// scripts, and the routes Node-RED's library panel calls (outside tRPC, with instance tokens).
import type { Area } from "../plugins/area";
import { libraryRouter } from "./procedures";
import { libraryStorageRoutes } from "./storage";

export const library = {
  procedures: { library: libraryRouter },
  /** The team library as Node-RED (an instance token) and signed-in people (a session) reach it. */
  machines: async (app, { db, tokenSecret, authenticator, baseUrl }) =>
    libraryStorageRoutes(app, { db, tokenSecret, authenticator, baseUrl }),
} satisfies Area;
