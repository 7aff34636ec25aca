// TRUST_PROXY: behind the proxies it names, the client's address is the one they forwarded in
// X-Forwarded-For (the right-most address no trusted hop vouches for) — counted by the rate
// limits, recorded, logged; without it the header is ignored, so a client cannot spoof its way
// past a limit.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig } from "../../src/env";
import { type Reply, startServer, type TestServer } from "../support/harness";

/** Two registrations per address in a minute: the third is 429. */
const LIMIT = { deviceRegistration: { max: 2, windowMs: 60_000 } };

let trusting: TestServer;
let direct: TestServer;
beforeAll(async () => {
  [trusting, direct] = await Promise.all([
    startServer({ trustProxy: ["127.0.0.1"], rateLimits: LIMIT }),
    startServer({ rateLimits: LIMIT }),
  ]);
});
afterAll(() => Promise.all([trusting?.close(), direct?.close()]));

/** A device's anonymous registration (limited per client address, which it records). */
const register = (server: TestServer, forwardedFor?: string): Promise<Reply> =>
  server.request("POST", "/api/v1/devices/_/register", {
    token: null,
    body: {},
    headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {},
  });

/** The addresses the registrations recorded, oldest first. */
async function recorded(server: TestServer): Promise<(string | null)[]> {
  const rows = await server.db
    .selectFrom("device_registrations")
    .select(["requested_from", "created_at"])
    .orderBy("created_at")
    .execute();
  return rows.map((row) => row.requested_from);
}

describe("behind a trusted proxy (TRUST_PROXY=127.0.0.1)", () => {
  test("the forwarded client address is the one counted, recorded and logged", async () => {
    expect((await register(trusting, "203.0.113.7")).status).toBe(200);
    expect((await register(trusting, "203.0.113.7")).status).toBe(200);
    const refused = await register(trusting, "203.0.113.7");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    // Another client behind the same proxy has a count of its own.
    expect((await register(trusting, "203.0.113.8")).status).toBe(200);
    expect((await recorded(trusting)).slice(-3)).toEqual([
      "203.0.113.7",
      "203.0.113.7",
      "203.0.113.8",
    ]);
    expect(trusting.logs.some((line) => line.includes('"ip":"203.0.113.7"'))).toBe(true);
  });

  test("an address a client prepended beyond the trusted hop is ignored: the right-most untrusted one counts", async () => {
    // The proxy appends the address it saw (203.0.113.9) to whatever the client sent.
    for (const forged of ["198.51.100.1", "198.51.100.2"]) {
      expect((await register(trusting, `${forged}, 203.0.113.9`)).status).toBe(200);
    }
    expect((await register(trusting, "198.51.100.3, 203.0.113.9")).status).toBe(429);
    expect((await recorded(trusting)).slice(-2)).toEqual(["203.0.113.9", "203.0.113.9"]);
  });
});

describe("without TRUST_PROXY", () => {
  test("X-Forwarded-For is ignored: forged addresses share the socket's one limit", async () => {
    expect((await register(direct, "203.0.113.10")).status).toBe(200);
    expect((await register(direct, "203.0.113.11")).status).toBe(200);
    expect((await register(direct, "203.0.113.12")).status).toBe(429);
    expect(await recorded(direct)).toEqual(["127.0.0.1", "127.0.0.1"]);
    expect(direct.logs.some((line) => line.includes("203.0.113."))).toBe(false);
  });
});

describe("TRUST_PROXY's values", () => {
  const trustOf = (value: string) => loadConfig({ TRUST_PROXY: value }).TRUST_PROXY;

  test("unset or false: none; a number: hops; else addresses, CIDRs and proxy-addr's names", () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(trustOf("false")).toBe(false);
    expect(trustOf("2")).toBe(2);
    expect(trustOf("127.0.0.1, 10.0.0.0/8,loopback")).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "loopback",
    ]);
  });

  test("true (any client's header believed) and what is not an address are configuration errors", () => {
    expect(() => trustOf("true")).toThrow(
      /TRUST_PROXY: true would take any client's X-Forwarded-For/,
    );
    expect(() => trustOf("10.0.0.0/8,proxy.example.com")).toThrow(
      /TRUST_PROXY: invalid IP address: proxy\.example\.com/,
    );
  });
});
