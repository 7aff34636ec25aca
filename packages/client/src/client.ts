// The typed client: tRPC's client of the platform's router, over HTTP with fetch.
import { createTRPCClient, httpBatchLink, httpLink, type TRPCClient } from "@trpc/client";
import type { FlowplaneRouter } from "#router";

/** The typed client: `client.team.byId.query({ teamId })`, `client.team.create.mutate(…)`. */
export type FlowplaneClient = TRPCClient<FlowplaneRouter>;

export interface FlowplaneClientOptions {
  /** The platform's base URL (`https://flowplane.example.com`), without `/trpc`. */
  url: string;
  /** A personal access token (`fpp_…`), sent as `Authorization: Bearer`. */
  token: string;
  /** The fetch to use (a wrapper adding timeouts, a test's); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
  /** Send calls made together in one request (tRPC's batch link); off by default. */
  batch?: boolean;
}

/** tRPC's client of the platform's router, authenticated with the token. */
export function createFlowplaneClient(options: FlowplaneClientOptions): FlowplaneClient {
  const link = options.batch ? httpBatchLink : httpLink;
  return createTRPCClient<FlowplaneRouter>({
    links: [
      link({
        url: `${trimmed(options.url)}/trpc`,
        headers: { authorization: `Bearer ${options.token}` },
        ...(options.fetch && { fetch: options.fetch }),
      }),
    ],
  });
}

/** The base URL without a trailing slash. */
export const trimmed = (url: string) => url.replace(/\/+$/, "");
