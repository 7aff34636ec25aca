// The router's type as clients see it: every procedure's kind, input and output, with the
// server's context (its database, its logger) erased, so that the published declarations need
// nothing of the server. The build writes it out in full (scripts/router-types.ts).
import type { AppRouter } from "@flowplane/api";
import type {
  AnyTRPCProcedure,
  inferProcedureInput,
  inferProcedureOutput,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
  TRPCRouterRecord,
  TRPCSubscriptionProcedure,
} from "@trpc/server";

type Root = AppRouter["_def"]["_config"]["$types"];

/**
 * A procedure as a client calls it: its kind, its input and its output (as the handler answers it;
 * tRPC's client types it as JSON makes it), nothing else.
 */
type PublicProcedure<P extends AnyTRPCProcedure> = P["_def"]["type"] extends "query"
  ? TRPCQueryProcedure<{
      input: inferProcedureInput<P>;
      output: inferProcedureOutput<P>;
      meta: object;
    }>
  : P["_def"]["type"] extends "mutation"
    ? TRPCMutationProcedure<{
        input: inferProcedureInput<P>;
        output: inferProcedureOutput<P>;
        meta: object;
      }>
    : TRPCSubscriptionProcedure<{
        input: inferProcedureInput<P>;
        output: inferProcedureOutput<P>;
        meta: object;
      }>;

/** A record of procedures and nested records, each procedure made public. */
export type PublicRecord<R extends TRPCRouterRecord> = {
  [K in keyof R]: R[K] extends AnyTRPCProcedure
    ? PublicProcedure<R[K]>
    : R[K] extends TRPCRouterRecord
      ? PublicRecord<R[K]>
      : never;
};

/** The API's router with its context erased: what `createTRPCClient` is typed by. */
export type FlowplaneRouter = TRPCBuiltRouter<
  {
    ctx: object;
    meta: object;
    errorShape: Root["errorShape"];
    transformer: Root["transformer"];
  },
  PublicRecord<AppRouter["_def"]["record"]>
>;
