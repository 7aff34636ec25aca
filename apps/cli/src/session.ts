// Signing in with a username and password, for `login --username`: the API's own sign-in
// (POST /account/login, as the web pages do), whose session cookie then authenticates REST requests
// until `signOut`. tRPC takes bearer tokens only, so these go to the REST routes. A write that rides
// on the cookie must carry the platform's Origin (else 403 `csrf_failed`), so every request sends
// the origin of the server's URL: the server's BASE_URL must have that origin.
import type { z } from "zod";
import { restFailure, TIMEOUT_MS, unreachable } from "./client";
import { CliError } from "./errors";

/** The API's session cookie (SESSION_COOKIE in apps/api/src/plugins/account.ts). */
const SESSION_COOKIE = "sid";

export interface Session {
  get<T>(path: string, schema: z.ZodType<T>): Promise<T>;
  post<T>(path: string, body: unknown, schema: z.ZodType<T>): Promise<T>;
  /** Ends the session on the server (POST /account/logout). */
  signOut(): Promise<void>;
}

export async function signIn(url: string, username: string, password: string): Promise<Session> {
  const origin = new URL(url).origin;

  async function send(
    method: string,
    path: string,
    body: unknown,
    cookie?: string,
  ): Promise<{ response: Response; json: unknown }> {
    const headers: Record<string, string> = { accept: "application/json", origin };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (cookie !== undefined) headers.cookie = `${SESSION_COOKIE}=${cookie}`;
    let response: Response;
    try {
      response = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // A redirect (to a sign-in page) is an answer to report, not to follow.
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw unreachable(url, error);
    }
    const text = await response.text().catch(() => "");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok) throw restFailure(json, response.status);
    return { response, json };
  }

  function parsed<T>(json: unknown, schema: z.ZodType<T>, path: string): T {
    const result = schema.safeParse(json);
    if (!result.success) {
      throw new CliError(`unexpected answer from ${url}${path}`, "unexpected_response");
    }
    return result.data;
  }

  const { response } = await send("POST", "/account/login", { username, password });
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(";", 1)[0]!)
    .find((pair) => pair.startsWith(`${SESSION_COOKIE}=`))
    ?.slice(SESSION_COOKIE.length + 1);
  if (!cookie) {
    throw new CliError(`${url} signed in but started no session`, "unexpected_response");
  }

  return {
    async get(path, schema) {
      return parsed((await send("GET", path, undefined, cookie)).json, schema, path);
    },
    async post(path, body, schema) {
      return parsed((await send("POST", path, body, cookie)).json, schema, path);
    },
    async signOut() {
      await send("POST", "/account/logout", undefined, cookie);
    },
  };
}
