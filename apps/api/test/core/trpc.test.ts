// The native tRPC endpoint (/trpc) that TypeScript programs and the CLI use.
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AppRouter } from "../../src/index";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const client = (token: string | null) =>
  createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${server.url}/trpc`,
        headers: () => (token ? { authorization: `Bearer ${token}` } : {}),
      }),
    ],
  });

describe("/trpc", () => {
  test("a typed client calls the same procedures with the same rules", async () => {
    const user = await server.user();
    const trpc = client(user.token);
    const team = await trpc.team.create.mutate({ name: "Via tRPC" });
    expect(team).toMatchObject({ name: "Via tRPC", slug: "via-trpc", memberCount: 1 });
    const teams = await trpc.user.teams.query();
    expect(teams.teams.map((t) => t.id)).toEqual([team.id]);
    const rest = await server.request("GET", `/api/v1/teams/${team.id}`, { token: user.token });
    expect(rest.body).toEqual(await trpc.team.byId.query({ teamId: team.id }));
  });

  test("errors carry our code and status, and no stack trace", async () => {
    const user = await server.user();
    const error = await client(user.token)
      .team.byId.query({ teamId: "AAAAAAAAAAAA" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    const data = (error as TRPCClientError<AppRouter>).data as Record<string, unknown>;
    expect(data).toMatchObject({ code: "not_found", httpStatus: 404 });
    expect(JSON.stringify((error as TRPCClientError<AppRouter>).shape)).not.toContain("stack");

    const invalid = (await client(user.token)
      .team.create.mutate({ name: "" })
      .catch((e: unknown) => e)) as TRPCClientError<AppRouter>;
    expect(invalid.data).toMatchObject({
      code: "invalid_request",
      httpStatus: 400,
      errors: [{ path: "name", message: "Must not be blank" }],
    });
  });

  test("refusals before tRPC runs (body too large, not JSON) come in tRPC's envelope too", async () => {
    const user = await server.user();
    const big = await fetch(`${server.url}/trpc/team.create`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({
      error: { code: -32013, data: { code: "payload_too_large", httpStatus: 413 } },
    });
    const text = await fetch(`${server.url}/trpc/team.create`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.token}`, "content-type": "text/plain" },
      body: "hello",
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({
      error: { data: { code: "unsupported_media_type" } },
    });
  });

  test("without a valid token every call is 401", async () => {
    for (const token of [null, "fpp_notevenclose"]) {
      const error = (await client(token)
        .user.me.query()
        .catch((e: unknown) => e)) as TRPCClientError<AppRouter>;
      expect(error.data).toMatchObject({ httpStatus: 401 });
    }
  });
});
