// The API's procedures: every area's, under the names tRPC clients call them by (`team.byId`).
import { accounts } from "./accounts/index";
import { applications } from "./applications/index";
import { auditLog } from "./audit-log/index";
import { broker } from "./broker/index";
import { catalogue } from "./catalogue/index";
import { devices } from "./devices/index";
import { router } from "./core/trpc";
import { instances } from "./instances/index";
import { library } from "./library/index";
import { pipelines } from "./pipelines/index";
import { platform } from "./platform/index";
import { search } from "./search/index";
import { snapshots } from "./snapshots/index";
import { teams } from "./teams/index";
import { tokens } from "./tokens/index";

export const appRouter = router({
  ...platform.procedures,
  ...accounts.procedures,
  ...teams.procedures,
  ...tokens.procedures,
  ...auditLog.procedures,
  ...catalogue.procedures,
  ...applications.procedures,
  ...instances.procedures,
  ...snapshots.procedures,
  ...broker.procedures,
  ...devices.procedures,
  ...library.procedures,
  ...pipelines.procedures,
  ...search.procedures,
});

export type AppRouter = typeof appRouter;
