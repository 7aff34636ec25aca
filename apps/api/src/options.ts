// What the server is built from (`buildApp`): the database, secrets, and the optional services
// and figures; main.ts fills it from the environment, the tests' harness from theirs.
import type { Db } from "@flowplane/db";
import type { Driver } from "@flowplane/runtime";
import type { Logger } from "pino";
import type { BrokerOptions } from "./broker/index";
import type { RateLimitOptions } from "./plugins/rate-limit-options";

export interface AppOptions {
  db: Db;
  tokenSecret: string;
  baseUrl: string;
  /** From `createLogger`; none: no logs. */
  logger?: Logger;
  bodyLimit?: number;
  /** How often expired tokens are deleted and lastUsedAt is written (default 60 s). */
  sweepIntervalMs?: number;
  /** Origins allowed to call the API from a browser (CORS); none: no CORS headers. */
  corsOrigins?: string[];
  /** Fixed maximum age of a sign-in session (default 7 days, as FlowFuse). */
  sessionMaxAgeMs?: number;
  /** A session unused this long ends (default 32 hours, as FlowFuse). */
  sessionIdleMs?: number;
  /** Rate limits (plugins/rate-limits.ts): the figures, FlowFuse's optional ones, Redis. */
  rateLimits?: RateLimitOptions;
  /** The team broker (none: no broker; the client routes still keep credentials). */
  broker?: BrokerOptions;
  /**
   * The domain under which instances' editors have their hosts (`<name>.<domain>`, on BASE_URL's
   * scheme and port; default `localhost`). Never BASE_URL's own host.
   */
  editorDomain?: string;
  /** What runs hosted instances (none: instances can be created but not run: 503). */
  instances?: { driver: Driver };
  /**
   * The first administrator's first password file (DATA_DIR/initial-admin-password): the sign-in
   * page mentions it while it exists, and it is deleted once that password is changed.
   */
  initialPasswordFile?: string;
}
