// Rate limits, counted by @fastify/rate-limit: in memory, or in Redis shared by every server
// process. Always on where guessing is the threat: failed sign-ins per account and per client
// address (past them a wrong password is 429 and the right one still signs in), password checks
// per client address (the cost of scrypt), password changes with a wrong current password per
// user, and failed setups with a device's one-time code per client address and overall (past
// either, every setup is 429 without a check of its code: a guess past the limit learns nothing,
// however spread out over addresses), and devices' registrations from their own terminal per
// client address (anonymous: each makes a row). FlowFuse's other
// limits are off by default (automation legitimately hammers the API) and on with RATE_LIMITS=on:
// a global limit per token, session or (anonymous) client address, and 5 per 30 s on PUT /user
// and POST /user/tokens.
//
// Limits of particular procedures are named by the procedures themselves (their meta's
// `rateLimit`), and counted by the procedures' own middleware (trpc.ts), so a call counts the same
// whether it comes
// through REST, /trpc or a page. Refusals are 429 `too_many_requests` in our envelope (tRPC's on
// /trpc) with Retry-After. The limits themselves and their defaults are in
// rate-limit-options.ts.
import rateLimit, {
  normalizeIP,
  type RateLimitOptions as RouteRateLimit,
} from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Redis } from "ioredis";
import { ApiError } from "../core/errors";
import type { ProcedureLimit } from "../core/limits";
import {
  CACHE,
  type Limit,
  MESSAGES,
  RATE_LIMIT_DEFAULTS,
  type RateLimitOptions,
  type RateLimits,
  WRONG_PASSWORD,
} from "./rate-limit-options";

/** The refusal, for a count whose window ends in `ttlMs`; Retry-After in whole seconds. */
function tooManyRequests(ttlMs: number, message: string): ApiError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  const error = new ApiError(429, "too_many_requests", `${message}; retry in ${seconds} s`);
  error.retryAfter = seconds;
  return error;
}

const addressKey = (request: FastifyRequest) => `address:${normalizeIP(request.ip)}`;

/** The caller as the global count knows it: the token or session, else the client address. */
const identityKey = (request: FastifyRequest) =>
  request.auth ? `${request.auth.kind}:${request.auth.id}` : addressKey(request);

/** The code of an ApiError, also one tRPC wrapped. */
function apiErrorOf(error: unknown): string | undefined {
  if (error instanceof ApiError) return error.apiCode;
  if (error instanceof Error && error.cause instanceof ApiError) return error.cause.apiCode;
  return undefined;
}

/** The HTTP status of an ApiError, also one tRPC wrapped. */
function statusOf(error: unknown): number | undefined {
  if (error instanceof ApiError) return error.status;
  if (error instanceof Error && error.cause instanceof ApiError) return error.cause.status;
  return undefined;
}

/** Runs each call after every earlier call with the same key has finished (in this process). */
function serializer() {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, run: () => Promise<T>): Promise<T> => {
    const result = (tails.get(key) ?? Promise.resolve()).then(run);
    const tail = result.catch(() => {});
    tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/**
 * Registers @fastify/rate-limit on `app` and returns what the routes and procedures use to apply
 * the limits. Register it before the routes the global limit covers: the plugin attaches its hook
 * to each route as it is added, as a route-level onRequest hook, which runs after the
 * application's own onRequest hooks — after authentication, so it can key on the caller.
 */
export async function registerRateLimits(
  app: FastifyInstance,
  options: RateLimitOptions,
): Promise<RateLimits> {
  const limits = {
    global: options.global ?? RATE_LIMIT_DEFAULTS.global,
    routes: options.routes ?? RATE_LIMIT_DEFAULTS.routes,
    signIn: options.signIn ?? RATE_LIMIT_DEFAULTS.signIn,
    signInAddress: options.signInAddress ?? RATE_LIMIT_DEFAULTS.signInAddress,
    signInChecks: options.signInChecks ?? RATE_LIMIT_DEFAULTS.signInChecks,
    passwordChange: options.passwordChange ?? RATE_LIMIT_DEFAULTS.passwordChange,
    otc: options.otc ?? RATE_LIMIT_DEFAULTS.otc,
    otcGlobal: options.otcGlobal ?? RATE_LIMIT_DEFAULTS.otcGlobal,
    deviceRegistration: options.deviceRegistration ?? RATE_LIMIT_DEFAULTS.deviceRegistration,
  };
  const enabled = options.enabled ?? false;
  /** Refusals so far, by limit (the metrics read them). */
  const refusals: Partial<Record<keyof typeof MESSAGES, number>> = {};
  const refuse = (ttlMs: number, limit: keyof typeof MESSAGES) => {
    refusals[limit] = (refusals[limit] ?? 0) + 1;
    return tooManyRequests(ttlMs, MESSAGES[limit]);
  };

  let redis: Redis | undefined;
  if (options.redisUrl) {
    // As the plugin's documentation advises, a count fails quickly rather than waits: no queue
    // while disconnected (ioredis reconnects in the background), one retry. Connected before the
    // server serves, so that its first requests do not fail; unreachable, the start fails.
    const client = new Redis(options.redisUrl, {
      connectTimeout: 1000,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
      connectionName: "flowplane-rate-limits",
    });
    client.on("error", (error) => app.log.warn({ err: error }, "rate-limit store (Redis) error"));
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`REDIS_URL: cannot connect to Redis: ${reason}`, { cause: error });
    }
    app.addHook("onClose", async () => {
      if (client.status === "ready") await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    });
    redis = client;
  }

  await app.register(rateLimit, {
    // The global limit, only with RATE_LIMITS=on.
    global: enabled,
    max: limits.global.max,
    timeWindow: limits.global.windowMs,
    hook: "onRequest",
    keyGenerator: identityKey,
    cache: CACHE.default,
    // A limit on load: while Redis is unreachable, serve rather than fail every request.
    skipOnError: true,
    // The plugin sets Retry-After and x-ratelimit-*; the body is our envelope.
    errorResponseBuilder: (_request, context) => refuse(context.ttl, "global"),
    ...(redis ? { redis, nameSpace: options.nameSpace ?? "flowplane-rate-limit-" } : {}),
  });

  /**
   * A count checked by hand (`createRateLimit`), keyed by `kind` and a subject: with Redis, every
   * such count shares one key prefix. Guessing limits fail closed: while the store is unreachable
   * the request fails (500) rather than go uncounted.
   */
  const manual = (kind: string, limit: Limit, cache = CACHE.default) => {
    const subjects = new WeakMap<FastifyRequest, string>();
    const settings: RouteRateLimit = {
      max: limit.max,
      timeWindow: limit.windowMs,
      keyGenerator: (request) => `${kind}:${subjects.get(request)}`,
      skipOnError: false,
      cache,
    };
    const check = app.createRateLimit(settings);
    /** Counts one for the subject, or (`increment` false) only reads its count. */
    return async (request: FastifyRequest, subject: string, increment = true) => {
      subjects.set(request, subject);
      const status = await check(request, { increment });
      // No allowList is configured, so nothing is exempt.
      if (status.isAllowed) throw new Error("unexpected rate-limit allowList");
      return status;
    };
  };

  const oneAtATime = serializer();
  /**
   * A limit on failures only: `run` unless the subject's failures reached the limit (then 429),
   * and its error counted when `failed` says so. Runs for one subject go one at a time in this
   * process, so that a burst of parallel guesses cannot all pass the check before the first
   * failure is counted.
   */
  const failuresOnly = (
    kind: string,
    limit: Limit,
    refusal: keyof typeof MESSAGES,
    cache?: number,
  ) => {
    const count = manual(kind, limit, cache);
    return <T>(
      request: FastifyRequest,
      subject: string,
      run: () => Promise<T>,
      failed: (error: unknown) => boolean,
    ): Promise<T> =>
      oneAtATime(`${kind}:${subject}`, async () => {
        // Read, not counted: the limit is reached once `max` failures are counted.
        const before = await count(request, subject, false);
        if (before.remaining === 0) throw refuse(before.ttl, refusal);
        try {
          return await run();
        } catch (error) {
          if (failed(error)) await count(request, subject);
          throw error;
        }
      });
  };

  // Per user, whichever token or session the user calls with.
  const routeCalls = manual("route", limits.routes);
  const wrongPasswords = failuresOnly("password", limits.passwordChange, "passwordChange");
  const activeLimit = (limit: ProcedureLimit | undefined) =>
    limit && (limit.always || enabled) ? limit.limit : undefined;

  const signInChecks = manual("sign-in-checks", limits.signInChecks);
  const accountFailures = manual("sign-in", limits.signIn, CACHE.signIn);
  const sourceFailures = manual("sign-in-address", limits.signInAddress);

  const otcFailures = manual("otc", limits.otc);
  const otcAllFailures = manual("otc-all", limits.otcGlobal);
  /**
   * A call with a device's one-time code: refused (429, the code unchecked) once its address's
   * failures, or everyone's, reached their limit; its 401 (an unknown, used or expired code)
   * counted against both. Unlike a password, the right code past the limit is refused too: a
   * code is only ever guessed or pasted once, and a guesser's right guess must not get through.
   * One at a time per address, so that parallel guesses cannot all pass before the first counts.
   */
  const deviceSetup = <T>(request: FastifyRequest, run: () => Promise<T>): Promise<T> => {
    const from = addressKey(request);
    return oneAtATime(`otc:${from}`, async () => {
      const [bySource, overall] = await Promise.all([
        otcFailures(request, from, false),
        otcAllFailures(request, "all", false),
      ]);
      if (bySource.remaining === 0) throw refuse(bySource.ttl, "otc");
      if (overall.remaining === 0) throw refuse(overall.ttl, "otcGlobal");
      try {
        return await run();
      } catch (error) {
        if (apiErrorOf(error) === "unauthorized" && statusOf(error) === 401) {
          await Promise.all([otcFailures(request, from), otcAllFailures(request, "all")]);
        }
        throw error;
      }
    });
  };

  return {
    async procedure(request, procedurePath, procedureLimit, run) {
      // A one-time code reaches only the device setup (core/trpc.ts refuses it anything else).
      if (request.auth?.kind === "otc") return deviceSetup(request, run);
      const limit = activeLimit(procedureLimit);
      // Every procedure runs authenticated; without a caller there is nothing to key on.
      if (!limit || !request.auth) return run();
      const { userId } = request.auth;
      if (limit === "passwordChange") {
        return wrongPasswords(
          request,
          userId,
          run,
          (error) => apiErrorOf(error) === WRONG_PASSWORD,
        );
      }
      const count = await routeCalls(request, `${procedurePath}:${userId}`);
      if (count.isExceeded) throw refuse(count.ttl, "routes");
      return run();
    },

    deviceRegistration: {
      max: limits.deviceRegistration.max,
      timeWindow: limits.deviceRegistration.windowMs,
      keyGenerator: (request) => `registration:${addressKey(request)}`,
      errorResponseBuilder: (_request, context) => refuse(context.ttl, "deviceRegistration"),
    },

    globalLimit: enabled,

    refusals,

    mayRefuse: (meta) =>
      enabled || meta.deviceSetup === true || activeLimit(meta.rateLimit) !== undefined,

    signIn: {
      /**
       * A limited sign-in never refuses the right password because of failures: its source's or
       * the account's count past its limit turns a wrong password's 401 into 429 (so a guesser
       * learns nothing more), while the right one still signs in. One flow failing sign-ins
       * from 127.0.0.1 (every instance calls from there) no longer locks every loopback user
       * out. What bounds the cost of scrypt is the count of checks per source.
       */
      async attempt(request, { account, source }, run) {
        const from = source ?? addressKey(request);
        const checks = await signInChecks(request, from);
        if (checks.isExceeded) {
          throw refuse(checks.ttl, source ? "signInSource" : "signInChecks");
        }
        // One at a time per account, so that a burst of parallel guesses cannot all be answered
        // 401 before the first failure is counted.
        return oneAtATime(`sign-in:${account}`, async () => {
          const [byAccount, bySource] = await Promise.all([
            accountFailures(request, account, false),
            sourceFailures(request, from, false),
          ]);
          const limited =
            byAccount.remaining === 0
              ? refuse(byAccount.ttl, "signIn")
              : bySource.remaining === 0
                ? refuse(bySource.ttl, source ? "signInSource" : "signInAddress")
                : undefined;
          try {
            return await run();
          } catch (error) {
            if (!(error instanceof ApiError && error.status === 401)) throw error;
            await Promise.all([accountFailures(request, account), sourceFailures(request, from)]);
            throw limited ?? error;
          }
        });
      },
    },
  };
}
