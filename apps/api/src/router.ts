// The API's procedures: every area's, under the names tRPC clients call them by (`team.byId`), as
// app.ts assembles them from its list of areas.
import { appRouter } from "./app";

export { appRouter };
export type AppRouter = typeof appRouter;
