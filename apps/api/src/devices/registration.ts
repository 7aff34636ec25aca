// A device registered from its own terminal, as FlowFuse 2.33 and its agent's interactive setup
// do it: the agent posts `/api/v1/devices/_/register` (anonymous) and is handed a page for a
// signed-in person (`registerUrl`, pages/register.ts) and a URL to poll (`doneUrl`). The person
// picks a team and confirms, which creates the device; the agent's poll then gets the device's id
// and a one-time code, once, and sets itself up with the code (credentials.ts). Both tokens are
// random, kept only as digests, live 30 minutes (FlowFuse's) and are used once.
import { generateToken, parseToken, tokenDigest } from "@flowplane/auth";
import {
  type Db,
  insertDeviceRegistration,
  pendingDeviceRegistration,
  pollDeviceRegistration,
} from "@flowplane/db";
import type { RateLimitOptions as RouteRateLimit } from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { notFound } from "../core/errors";
import { type RouteDoc, type RouteResponse, routeUrl } from "../core/route-docs";
import { underApi } from "../core/rest";
import { newOtc } from "./credentials";
import { AGENT_TAG } from "./live-schemas";

/** How long a registration waits for its person and its poll (FlowFuse's 30 minutes). */
export const DEVICE_REGISTRATION_LIFETIME_MS = 30 * 60_000;

/** The registration's page, where a person completes it. */
export const registrationPage = (sessionToken: string) =>
  `/register/remote-instance/${sessionToken}`;

/** The digest of a registration's page token, or undefined when it is not one (no I/O). */
export function registrationDigest(secret: string, sessionToken: string): string | undefined {
  return parseToken(sessionToken) === "deviceRegistration"
    ? tokenDigest(secret, sessionToken)
    : undefined;
}

const error500: RouteResponse = {
  description: "Unexpected error (`unexpected_error`); quote the requestId",
};

const START: RouteDoc = {
  id: "deviceAgent-register",
  method: "POST",
  path: "/api/v1/devices/_/register",
  tags: [AGENT_TAG],
  summary: "Start a device's registration from its own terminal",
  description:
    "What the device agent's interactive setup calls (no token): the reply's `registerUrl` is a page of this platform for a signed-in person, who picks the team (and application) the device joins and confirms; `doneUrl` is what the agent then polls for the new device's id and one-time code. Both last 30 minutes and are used once. Limited per client address (5 per 30 s): past it, 429 `too_many_requests` with Retry-After.",
  security: "none",
  rateLimit: "always",
  body: z.object({}).optional(),
  responses: {
    200: {
      description: "The page to open, and the URL to poll",
      schema: z.object({
        registerUrl: z.string().describe("`/register/remote-instance/<token>`, for a person"),
        doneUrl: z.string().describe("`/api/v1/devices/_/register/done/<token>`, for the agent"),
      }),
    },
    413: { description: "The body is larger than the limit (`payload_too_large`)" },
    415: { description: "The body is not `application/json` (`unsupported_media_type`)" },
    500: error500,
  },
};

const STATUS: RouteDoc = {
  id: "deviceAgent-registrationStatus",
  method: "GET",
  path: "/api/v1/devices/_/register/status/{sessionToken}",
  tags: [AGENT_TAG],
  summary: "Whether a device's registration waits for a person",
  description:
    "The registration page's own check (any signed-in person or personal access token): 202 `{}` while it waits, else 404 (unknown, completed, or expired).",
  security: "bearerAuth",
  rateLimit: "global",
  params: z.object({ sessionToken: z.string().describe("The token of the registration's page") }),
  responses: {
    202: { description: "It waits for a person", schema: z.object({}).strict() },
    401: {
      description: "Missing, malformed, unknown, expired or revoked token (`unauthorized`)",
    },
    404: { description: "No registration waits under this token (`not_found`)" },
    500: error500,
  },
};

const DONE: RouteDoc = {
  id: "deviceAgent-registrationDone",
  method: "GET",
  path: "/api/v1/devices/_/register/done/{doneToken}",
  tags: [AGENT_TAG],
  summary: "The agent's poll of its registration",
  description:
    "No token: the path's own is the credential. 202 `{}` with `Retry-After: 5` while no person has completed the registration; once one has, 200 with the new device's `id` and a one-time code `otc` (valid 24 hours) for the agent's setup — once: the registration is then gone, and a later poll is 404, as is an unknown or expired one.",
  security: "none",
  rateLimit: "global",
  params: z.object({ doneToken: z.string().describe("The poll's token, from `doneUrl`") }),
  responses: {
    200: {
      description: "Completed: the device and its one-time code, given once",
      schema: z.object({
        id: z.string().describe("The new device's id"),
        otc: z.string().describe("Its one-time code, for the agent's setup"),
      }),
    },
    202: {
      description: "Not completed yet; poll again after Retry-After",
      schema: z.object({}).strict(),
      headers: {
        "Retry-After": { description: "Seconds to wait", schema: { type: "integer", minimum: 1 } },
      },
    },
    404: { description: "Unknown, already read, or expired (`not_found`)" },
    500: error500,
  },
};

/** The registration's routes under /api/v1, for the OpenAPI document. */
export const DEVICE_REGISTRATION_DOCS: RouteDoc[] = [START, STATUS, DONE];

/** The anonymous routes, which authenticate nobody: the start and the agent's poll. */
export async function deviceRegistrationRoutes(
  app: FastifyInstance,
  opts: { db: Db; tokenSecret: string; rateLimit: RouteRateLimit },
) {
  const { db, tokenSecret } = opts;

  app.post(routeUrl(START), { config: { rateLimit: opts.rateLimit } }, async (request, reply) => {
    const sessionToken = generateToken("deviceRegistration");
    const doneToken = generateToken("deviceRegistrationPoll");
    await insertDeviceRegistration(db, {
      sessionDigest: tokenDigest(tokenSecret, sessionToken),
      doneDigest: tokenDigest(tokenSecret, doneToken),
      expiresAt: new Date(Date.now() + DEVICE_REGISTRATION_LIFETIME_MS),
      requestedFrom: request.ip,
    });
    return reply.send({
      registerUrl: registrationPage(sessionToken),
      doneUrl: `/api/v1/devices/_/register/done/${doneToken}`,
    });
  });

  app.get<{ Params: { doneToken: string } }>(routeUrl(DONE), async (request, reply) => {
    const { doneToken } = request.params;
    if (parseToken(doneToken) !== "deviceRegistrationPoll") throw notFound();
    const otc = newOtc(tokenSecret);
    const found = await pollDeviceRegistration(db, tokenDigest(tokenSecret, doneToken), otc.kept);
    if (!found) throw notFound();
    if (found === "pending") return reply.header("retry-after", "5").code(202).send({});
    return reply.send({ id: found.deviceId, otc: otc.code });
  });
}

/**
 * Whether a registration is still waiting, for its page: a person's route, in the people's /api
 * context (authenticated as any of theirs).
 */
export async function registrationStatusRoute(
  app: FastifyInstance,
  { db, tokenSecret }: { db: Db; tokenSecret: string },
) {
  app.get<{ Params: { sessionToken: string } }>(
    underApi(routeUrl(STATUS)),
    async (request, reply) => {
      const digest = registrationDigest(tokenSecret, request.params.sessionToken);
      if (!digest || !(await pendingDeviceRegistration(db, digest))) throw notFound();
      return reply.code(202).send({});
    },
  );
}
