// What an area is to the platform: one descriptor (`Area`) that brings everything the area owns —
// its procedures, the routes people and machines call outside tRPC, its pages, its routes' entries
// in the OpenAPI document, its runtime and what that gives the procedures' context, its
// housekeeping — so that app.ts lists areas, one line each, and knows nothing else about them.
// The platform's options are declared here for what every area shares; an area adds its own
// (`declare module "../plugins/area"`), as it adds what its procedures need to `Context`.
import type { Db } from "@flowplane/db";
import type { AnyRouter } from "@trpc/server";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { Authenticator } from "../core/authenticator";
import type { RouteDoc } from "../core/route-docs";
import type { Context } from "../core/trpc";
import type { TrustProxy } from "../env";
import type { PageRoutes } from "../pages/page";
import type { RateLimitOptions, RateLimits } from "./rate-limit-options";

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
  /**
   * The reverse proxies whose X-Forwarded-* are believed (TRUST_PROXY): `request.ip`, protocol and
   * host are then the client's as they forwarded them. Default none: the socket's.
   */
  trustProxy?: TrustProxy;
}

/** What every area is given: the platform's options and the services shared by all. */
export interface Platform {
  options: AppOptions;
  db: Db;
  baseUrl: string;
  tokenSecret: string;
  /** Who is calling, for every credential kind (core/authenticator.ts). */
  authenticator: Authenticator;
  limits: RateLimits;
  /** A sign-in session's fixed maximum age and idle timeout. */
  sessions: { maxAgeMs: number; idleMs: number };
  /** What the areas' runtimes add to the procedures' context, as each area starts. */
  services: Partial<Context>;
  /** The context a request's procedures and pages run in. */
  contextOf(request: FastifyRequest): Context;
}

/** Requests an area answers before Fastify's router sees them (the editors' hosts). */
export interface FrontDoor {
  /** Answers the request and says so; false: not this door's. */
  web(request: IncomingMessage, response: ServerResponse): boolean;
  /** Takes the WebSocket upgrade and says so; false: not this door's. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): Promise<void>;
}

/** A plugin registered in a context of its own, given the platform. */
export type AreaPlugin = (app: FastifyInstance, platform: Platform) => Promise<void>;

export interface Area {
  /** Its tRPC procedures, under the names clients call them by (`team.byId`). */
  procedures?: Record<string, AnyRouter>;
  /** Made before the server: requests it answers before Fastify does. */
  frontDoor?(options: AppOptions, log: () => FastifyBaseLogger): FrontDoor;
  /** Started, in the areas' order, before any route: its runtime, and what it gives the context. */
  start?(app: FastifyInstance, platform: Platform): Promise<Partial<Context> | void>;
  /**
   * The routes machines call (a device agent, a hosted Node-RED, a broker), each in a context of
   * its own whose hook authenticates that caller's own kind of credential before any body is read.
   */
  machines?: AreaPlugin;
  /** People's routes outside tRPC under /api (a token or a session, as every REST route). */
  api?: AreaPlugin;
  /** People's routes under /account (sign-in and its kin: a session is read when there is one). */
  account?: AreaPlugin;
  /** Its web pages. */
  pages?(platform: Platform): PageRoutes;
  /** Its routes outside tRPC under /api/v1, for the OpenAPI document. */
  docs?: RouteDoc[];
  /** Housekeeping, each sweep: what of it has expired is deleted. */
  sweep?(platform: Platform, log: FastifyBaseLogger): Promise<void>;
}
