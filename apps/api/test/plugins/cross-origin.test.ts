// Cross-site request forgery, one rule for the API's cookie writes, /account/login and the pages'
// forms (core/cross-origin.ts, as Go 1.25's CrossOriginProtection): Sec-Fetch-Site decides where
// present; else an Origin must be the request's own host (or BASE_URL's); with neither header the
// request is not from a browser and goes on. Every combination, through the real server, with the
// Host header as the browser sent it.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sessionOf, startServer, type TestServer } from "../support/harness";

let server: TestServer;
let port: number;
let person: { id: string; username: string; password: string };
let sid: string;

beforeAll(async () => {
  // BASE_URL differs from where the server listens, as behind a proxy or opened as localhost.
  server = await startServer();
  port = Number(new URL(server.url).port);
  person = await server.userWithPassword();
  sid = await server.signIn(person.username, person.password);
});
afterAll(() => server?.close());

/** A raw HTTP request with exactly these headers (Host included), as a browser would send it. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: { json?: unknown; form?: Record<string, string> },
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}> {
  const payload =
    body?.json !== undefined
      ? JSON.stringify(body.json)
      : body?.form !== undefined
        ? new URLSearchParams(body.form).toString()
        : undefined;
  const all: Record<string, string> = { ...headers };
  if (payload !== undefined) {
    all["content-type"] =
      body?.json !== undefined ? "application/json" : "application/x-www-form-urlencoded";
    all["content-length"] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers: all, setHost: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The reasons the server logged for its refusals with this message. */
const refusals = (message: string) =>
  server.logs
    .map((line) => JSON.parse(line) as { msg?: string; reason?: string })
    .filter((entry) => entry.msg === message)
    .map((entry) => entry.reason);

interface Case {
  name: string;
  host?: string;
  origin?: string;
  site?: string;
  allowed: boolean;
}

const cases = (): Case[] => [
  { name: "neither header (a script)", allowed: true },
  { name: "Sec-Fetch-Site same-origin", site: "same-origin", allowed: true },
  { name: "Sec-Fetch-Site none (typed, a bookmark)", site: "none", allowed: true },
  { name: "Sec-Fetch-Site same-site (another port)", site: "same-site", allowed: false },
  { name: "Sec-Fetch-Site cross-site", site: "cross-site", allowed: false },
  {
    name: "Sec-Fetch-Site same-origin decides over an odd Origin",
    site: "same-origin",
    origin: "https://evil.example",
    allowed: true,
  },
  {
    name: "Sec-Fetch-Site cross-site decides over our own Origin",
    site: "cross-site",
    origin: `http://127.0.0.1:${port}`,
    allowed: false,
  },
  { name: "Origin of the request's own host", origin: `http://127.0.0.1:${port}`, allowed: true },
  {
    name: "Origin localhost when opened as localhost",
    host: `localhost:${port}`,
    origin: `http://localhost:${port}`,
    allowed: true,
  },
  { name: "Origin of BASE_URL (behind a proxy)", origin: "http://127.0.0.1:3000", allowed: true },
  { name: "Origin of another site", origin: "https://evil.example", allowed: false },
  { name: "Origin null (a sandboxed or privacy-hidden page)", origin: "null", allowed: false },
  {
    name: "Origin localhost when opened as 127.0.0.1",
    origin: `http://localhost:${port}`,
    allowed: false,
  },
  { name: "Origin of another port", origin: `http://127.0.0.1:${port + 1}`, allowed: false },
];

const headersOf = (c: Case, extra: Record<string, string> = {}) => ({
  host: c.host ?? `127.0.0.1:${port}`,
  ...(c.origin !== undefined ? { origin: c.origin } : {}),
  ...(c.site !== undefined ? { "sec-fetch-site": c.site } : {}),
  ...extra,
});

describe("every header combination", () => {
  test("a signed-in write to the API", async () => {
    for (const [i, c] of cases().entries()) {
      const reply = await send("POST", "/api/v1/teams", headersOf(c, { cookie: `sid=${sid}` }), {
        json: { name: `Team ${i}` },
      });
      expect(reply.status, c.name).toBe(c.allowed ? 200 : 403);
      if (!c.allowed) expect(JSON.parse(reply.text).code, c.name).toBe("csrf_failed");
    }
    // The log says why, naming what the browser sent.
    const reasons = refusals("cross-site request refused");
    expect(reasons).toContain('Sec-Fetch-Site is "cross-site", not same-origin');
    expect(reasons).toContain(
      `Origin "https://evil.example" is neither this request's host ("127.0.0.1:${port}") nor BASE_URL's origin`,
    );
  });

  test("signing in with POST /account/login", async () => {
    for (const c of cases()) {
      const reply = await send("POST", "/account/login", headersOf(c), {
        json: { username: person.username, password: person.password },
      });
      expect(reply.status, c.name).toBe(c.allowed ? 200 : 403);
      const cookies = [reply.headers["set-cookie"] ?? []].flat().join("\n");
      expect(cookies.includes("sid=fps_"), c.name).toBe(c.allowed);
    }
  });

  test("the sign-in page's form", async () => {
    for (const c of cases()) {
      const reply = await send("POST", "/sign-in", headersOf(c, { accept: "text/html" }), {
        form: { username: person.username, password: person.password },
      });
      expect(reply.status, c.name).toBe(c.allowed ? 303 : 403);
      if (!c.allowed) {
        // The page says what happened and what to do.
        expect(reply.text, c.name).toContain("sent from another site");
        expect(reply.text).toContain(
          "open this platform&#39;s own page and send the form from there",
        );
        expect(reply.text).toContain('href="/sign-in"');
      }
    }
    expect(refusals("cross-site form refused")).toContain(
      'Sec-Fetch-Site is "same-site", not same-origin',
    );
  });

  test("a signed-in page's form", async () => {
    for (const [i, c] of cases().entries()) {
      const name = `Form ${i}`;
      const reply = await send(
        "POST",
        "/teams",
        headersOf(c, { cookie: `sid=${sid}`, accept: "text/html" }),
        {
          form: { name },
        },
      );
      expect(reply.status, c.name).toBe(c.allowed ? 303 : 403);
    }
    const teams = await server.asSession(sid, "GET", "/api/v1/user/teams");
    const names = teams.body.teams.map((t: { name: string }) => t.name);
    for (const [i, c] of cases().entries()) {
      expect(names.includes(`Form ${i}`), c.name).toBe(c.allowed);
    }
  });

  test("reads and bearer-token writes are not judged", async () => {
    const crossSite = {
      host: `127.0.0.1:${port}`,
      "sec-fetch-site": "cross-site",
      origin: "https://evil.example",
    };
    expect((await send("GET", "/api/v1/user", { ...crossSite, cookie: `sid=${sid}` })).status).toBe(
      200,
    );
    const bearer = await send(
      "POST",
      "/api/v1/teams",
      { ...crossSite, authorization: `Bearer ${server.adminToken}` },
      { json: { name: "By token" } },
    );
    expect(bearer.status).toBe(200);
  });
});

test("a script signs in with a password, makes itself a token and renames a team (no Origin, no Sec-Fetch-Site)", async () => {
  // What a CI job does with fetch: nothing of a browser's headers.
  const login = await fetch(`${server.url}/account/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: person.username, password: person.password }),
  });
  expect(login.status).toBe(200);
  const cookie = `sid=${sessionOf(login)}`;
  const asScript = (method: string, path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const token = await asScript("POST", "/api/v1/user/tokens", { name: "ci" });
  expect(token.status).toBe(200);
  const value = ((await token.json()) as { token: string }).token;
  const team = await asScript("POST", "/api/v1/teams", { name: "Scripted" });
  expect(team.status).toBe(200);
  const { id } = (await team.json()) as { id: string };
  const renamed = await asScript("PUT", `/api/v1/teams/${id}`, { name: "Scripted, renamed" });
  expect(renamed.status).toBe(200);
  // The token it made works on its own.
  const read = await fetch(`${server.url}/api/v1/teams/${id}`, {
    headers: { authorization: `Bearer ${value}` },
  });
  expect(((await read.json()) as { name: string }).name).toBe("Scripted, renamed");
});
