// The context every procedure and page runs in (core/trpc.ts's `Context`, with what the areas add
// to it): the request's caller and the server's services, built once per request by `contextOf`.
import type { Db } from "@flowplane/db";
import type { FastifyRequest } from "fastify";
import type { InitialPassword } from "./accounts/index";
import type { TeamBroker } from "./broker/index";
import type { Context } from "./core/trpc";
import type { EditorHosts, InstanceRuntime } from "./instances/index";
import type { Deploys } from "./pipelines/index";
import type { RateLimits } from "./plugins/rate-limit-options";

export interface Services {
  db: Db;
  baseUrl: string;
  tokenSecret: string;
  limits: RateLimits;
  /** None: no broker. */
  teamBroker?: TeamBroker;
  /** None: instances are not run. */
  runtime?: InstanceRuntime;
  deploys: Deploys;
  initialPassword?: InitialPassword;
  editorHosts: EditorHosts;
}

export function requestContext(services: Services): (request: FastifyRequest) => Context {
  const { db, baseUrl, tokenSecret, limits, teamBroker, runtime, deploys, initialPassword } =
    services;
  const { editorHosts } = services;
  return (request) => ({
    db,
    auth: request.auth!,
    preloadedTeam: request.preloadedTeam,
    preloadedUserTeams: request.preloadedUserTeams,
    requestId: request.id,
    log: request.log,
    baseUrl,
    tokenSecret,
    rateLimit: (procedurePath, run) => limits.procedure(request, procedurePath, run),
    broker: teamBroker?.access,
    brokerEndpoint: teamBroker?.endpoint,
    instances: runtime,
    deploys,
    initialPassword,
    editorHosts,
  });
}
