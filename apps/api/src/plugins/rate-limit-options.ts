// What the rate limits are (plugins/rate-limits.ts counts them): each limit's options and
// defaults, the procedures with a limit of their own, the refusals' messages, and what the routes
// and procedures are given to apply them.
import type { RateLimitOptions as RouteRateLimit } from "@fastify/rate-limit";
import type { FastifyRequest } from "fastify";
import type { ProcedureLimit, SignInLimits } from "../core/limits";
import type { Meta } from "../core/trpc";

/** At most `max` in a window of `windowMs` (fixed windows, as the plugin counts). */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface RateLimitOptions {
  /** FlowFuse's optional limits: the global one and those of PUT /user, POST /user/tokens. */
  enabled?: boolean;
  /** Requests per token, session or anonymous client address (default 1000 per 60 s). */
  global?: Limit;
  /** PUT /user, POST /user/tokens and POST /projects/check-name, each per user (default 5 per 30 s). */
  routes?: Limit;
  /** Failed sign-ins per account (by username or email alike); always on (default 5 per 30 s, FlowFuse's figure). */
  signIn?: Limit;
  /** Failed sign-ins per client address, or per instance for its editor; always on (default 30 per 30 s). */
  signInAddress?: Limit;
  /** Password checks (sign-ins, right or wrong) per client address or instance; always on (default 300 per 60 s). */
  signInChecks?: Limit;
  /** Password changes with a wrong current password, per user; always on (default 5 per 30 s). */
  passwordChange?: Limit;
  /**
   * Failed device setups with a one-time code (an unknown, used or expired code) per client
   * address; past it, that address's setups are 429, right code or not (default 10 per 60 s).
   */
  otc?: Limit;
  /** Failed device setups with a one-time code from all addresses together (default 100 per 60 s). */
  otcGlobal?: Limit;
  /**
   * Devices' registrations from their own terminal (POST /api/v1/devices/_/register, anonymous)
   * per client address; always on (default 5 per 30 s, FlowFuse's figure).
   */
  deviceRegistration?: Limit;
  /** Counts kept in this Redis, shared by every server using it; none: in this process. */
  redisUrl?: string;
  /** Prefix of the Redis keys (default `flowplane-rate-limit-`). */
  nameSpace?: string;
}

export const RATE_LIMIT_DEFAULTS = {
  global: { max: 1000, windowMs: 60_000 },
  routes: { max: 5, windowMs: 30_000 },
  signIn: { max: 5, windowMs: 30_000 },
  signInAddress: { max: 30, windowMs: 30_000 },
  signInChecks: { max: 300, windowMs: 60_000 },
  passwordChange: { max: 5, windowMs: 30_000 },
  otc: { max: 10, windowMs: 60_000 },
  otcGlobal: { max: 100, windowMs: 60_000 },
  deviceRegistration: { max: 5, windowMs: 30_000 },
} satisfies Record<string, Limit>;

/** The error of a wrong current password (routers/user.ts): what the password limit counts. */
export const WRONG_PASSWORD = "password_change_failed";

export const MESSAGES = {
  global: "Too many requests",
  routes: "Too many requests to this operation",
  passwordChange: "Too many failed password changes",
  signIn: "Too many failed sign-ins for this account",
  signInAddress: "Too many failed sign-ins from this address",
  signInChecks: "Too many sign-in attempts from this address",
  signInSource: "Too many sign-in attempts to this editor",
  otc: "Too many failed one-time codes from this address",
  otcGlobal: "Too many failed one-time codes",
  deviceRegistration: "Too many device registrations from this address",
};

/**
 * In memory, how many keys each count keeps (the least recently used go first). Sign-in failures
 * keep more, so that an attacker cannot cheaply push a username's count out with other names.
 */
export const CACHE = { default: 10_000, signIn: 50_000 };

export interface RateLimits {
  /** Requests refused so far, by limit (MESSAGES' names), for the metrics. */
  refusals: Readonly<Partial<Record<keyof typeof MESSAGES, number>>>;
  /**
   * Runs a call of a procedure (`run` throws its error) within the procedure's own limit, if it
   * has one: 429 instead when the limit is reached.
   */
  procedure<T>(
    request: FastifyRequest,
    procedurePath: string,
    limit: ProcedureLimit | undefined,
    run: () => Promise<T>,
  ): Promise<T>;
  /**
   * Whether a procedure's operation can be refused with 429 (for the OpenAPI document): its own
   * limit on, the device setup's, or the global one.
   */
  mayRefuse(meta: Meta): boolean;
  /** Whether the global limit is on (RATE_LIMITS=on): routes outside tRPC may then answer 429. */
  globalLimit: boolean;
  signIn: SignInLimits;
  /** The route limit of a device's registration (a route's `config.rateLimit`), per address. */
  deviceRegistration: RouteRateLimit;
}
