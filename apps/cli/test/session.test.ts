// `login --username` against a platform that judges a session's writes by the request's own Host
// (Go's cross-origin protection: an Origin must name the host the request was sent to; a request
// with neither Origin nor Sec-Fetch-Site is a script's and passes), reached past a proxy at another
// address than its BASE_URL. The real server judges the Origin by its BASE_URL instead (the other
// suites cover that rule); this loopback stand-in answers only the six requests a sign-in makes.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loginFileOf, newUser } from "./cli";

const PASSWORD = "correct horse battery staple";
const requests: { method: string; path: string; origin?: string; cookie?: string }[] = [];
let url: string;

const user = {
  id: "u1",
  username: "alice",
  name: "Alice",
  email: null,
  admin: false,
  suspended: false,
  createdAt: "2026-01-01T00:00:00.000Z",
  links: { self: "/api/v1/users/u1" },
};

function answer(response: ServerResponse, status: number, body: unknown, headers = {}) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

async function platform(request: IncomingMessage, response: ServerResponse) {
  let body = "";
  for await (const chunk of request) body += String(chunk);
  const { method = "GET", headers } = request;
  const path = request.url ?? "/";
  requests.push({ method, path, origin: headers.origin, cookie: headers.cookie });
  if (method === "POST" && headers.origin && new URL(headers.origin).host !== headers.host) {
    return answer(response, 403, { code: "csrf_failed", error: "Cross-site request refused" });
  }
  if (method === "GET" && path === "/healthz") {
    return answer(response, 200, { status: "ok", platform: "flowplane" });
  }
  const signedIn = headers.cookie === "sid=session-1";
  if (method === "POST" && path === "/account/login") {
    const { password } = JSON.parse(body) as { password: string };
    if (password !== PASSWORD) {
      return answer(response, 401, { code: "unauthorized", error: "Wrong username or password" });
    }
    return answer(response, 200, { status: "okay" }, { "set-cookie": "sid=session-1; HttpOnly" });
  }
  if (!signedIn) return answer(response, 401, { code: "unauthorized", error: "unauthorized" });
  if (method === "GET" && path === "/api/v1/settings") {
    return answer(response, 200, {
      version: "0.0.0",
      base_url: "https://flowplane.example.com",
      "team:create": true,
    });
  }
  if (method === "GET" && path === "/api/v1/user") return answer(response, 200, user);
  if (method === "POST" && path === "/api/v1/user/tokens") {
    return answer(response, 200, {
      id: "t1",
      name: (JSON.parse(body) as { name: string }).name,
      expiresAt: null,
      readOnly: false,
      adminOptIn: false,
      teams: [],
      createdAt: "2026-01-01T00:00:00.000Z",
      lastUsedAt: null,
      token: "fpp_madebythesession000000000000000000",
    });
  }
  if (method === "POST" && path === "/account/logout") return answer(response, 200, {});
  answer(response, 404, { code: "not_found", error: "Not Found" });
}

const server = createServer((request, response) => void platform(request, response));
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("signing in where the Origin is judged by the request's Host", () => {
  it("signs in with no Origin, has the token created, and signs out, each write sent again without the refused Origin", async () => {
    const person = await newUser();

    const login = await person.flowplaneWith(
      `${PASSWORD}\n`,
      ...["login", "--username", "alice", "--url", url],
    );

    expect(login).toMatchObject({ status: 0, stderr: "" });
    expect(login.stdout).toContain(`Stored in ${loginFileOf(person)}.`);
    expect(requests.map(({ method, path, origin }) => [method, path, origin])).toEqual([
      ["GET", "/healthz", undefined],
      ["POST", "/account/login", undefined],
      ["GET", "/api/v1/user", undefined],
      ["GET", "/api/v1/settings", undefined],
      ["POST", "/api/v1/user/tokens", "https://flowplane.example.com"],
      ["POST", "/api/v1/user/tokens", undefined],
      ["POST", "/account/logout", undefined],
    ]);
    expect(requests.slice(2).every((request) => request.cookie === "sid=session-1")).toBe(true);
  });
});
