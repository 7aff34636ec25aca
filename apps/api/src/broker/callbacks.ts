// FlowFuse's HTTP authentication and authorization callbacks for an external MQTT broker (EMQX):
// `POST /api/comms/v2/auth` and `POST /api/comms/v2/acls`, with FlowFuse's request and answer
// shapes. Unlike FlowFuse's (open to anyone who can reach them), they need a broker token
// (`fpb_…`, created by an administrator), sent by EMQX's HTTP sources as a bearer header. The
// answers are BrokerAccess's, the same the embedded broker acts on.
import { BrokerAclRequest, BrokerAuthRequest, type BrokerAuthResponse } from "@flowplane/contract";
import { bearerToken, parseToken, tokenDigest } from "@flowplane/auth";
import { type Db, findBrokerTokenByDigest, touchBrokerToken } from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodType } from "zod";
import type { BrokerAccess } from "./access";
import { isPlatformLogin, isPlatformUsername, platformMayUse } from "./platform-identity";
import { toErrorResponse, unauthorized, validationError } from "../core/errors";

export interface BrokerCallbackOptions {
  db: Db;
  tokenSecret: string;
  access: BrokerAccess;
}

const TOUCH_INTERVAL_MS = 60_000;

export async function brokerCallbackRoutes(app: FastifyInstance, opts: BrokerCallbackOptions) {
  const touched = new Map<string, number>();

  // A broker token, or 401 before the body is read: this context's own onRequest hook (issue 32).
  app.addHook("onRequest", async (request, reply) => {
    if (!(await guard(request, reply))) return reply;
  });

  /** Whether the request carries a broker token; else a 401 sent. */
  async function guard(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const token = bearerToken(request.headers.authorization);
    const found =
      token && parseToken(token) === "broker"
        ? await findBrokerTokenByDigest(opts.db, tokenDigest(opts.tokenSecret, token))
        : undefined;
    if (!found) {
      const { status, body } = toErrorResponse(unauthorized(), request.id);
      await reply.code(status).send(body);
      return false;
    }
    const now = Date.now();
    if (now - (touched.get(found.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      touched.set(found.id, now);
      await touchBrokerToken(opts.db, found.id);
    }
    return true;
  }

  function parse<T>(schema: ZodType<T>, body: unknown): T {
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw validationError(parsed.error);
    return parsed.data;
  }

  // EMQX sends far more requests than people do: never rate limited here (the broker's own
  // limits apply at its edge), as FlowFuse.
  const config = { rateLimit: false as const };

  app.post("/api/comms/v2/auth", { config }, async (request, reply) => {
    const { clientId, username, password } = parse(BrokerAuthRequest, request.body);
    // The platform's own client (the devices' channel): unmounted, as devices are.
    if (isPlatformLogin(opts.tokenSecret, username, clientId, password)) {
      const answer: BrokerAuthResponse = {
        result: "allow",
        is_superuser: false,
        client_attrs: { team: "" },
      };
      return reply.code(200).send(answer);
    }
    const session = await opts.access.authenticate(username, clientId, password);
    const answer: BrokerAuthResponse = session
      ? { result: "allow", is_superuser: false, client_attrs: { team: session.mount } }
      : { result: "deny" };
    return reply.code(200).send(answer);
  });

  app.post("/api/comms/v2/acls", { config }, async (request, reply) => {
    const { username, topic, action } = parse(BrokerAclRequest, request.body);
    // A platform username is only ever the platform's: it authenticated above, or not at all.
    const allowed = isPlatformUsername(username)
      ? platformMayUse(action, topic)
      : await opts.access.authorizeUsername(username, action, topic);
    return reply.code(200).send({ result: allowed ? "allow" : "deny" });
  });
}
