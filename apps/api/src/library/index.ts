// The team library area: the entries a team's Node-RED instances share — their procedures for
// scripts, the routes Node-RED's library panel calls (outside tRPC, with instance tokens), and
// the team's library page.
import type { Area } from "../plugins/area";
import { libraryPages } from "./pages/library";
import { libraryRouter } from "./procedures";
import { libraryStorageRoutes } from "./storage";

export const library = {
  procedures: { library: libraryRouter },
  /** The team library as Node-RED (an instance token) and signed-in people (a session) reach it. */
  machines: async (app, { db, tokenSecret, authenticator, baseUrl }) =>
    libraryStorageRoutes(app, { db, tokenSecret, authenticator, baseUrl }),
  /** The team's library page: its entries, one entry's content, saving and deleting. */
  pages: () => libraryPages,
} satisfies Area;
