// Signing in with a username and password: the API's own sign-in (POST /account/login, as the web
// pages do), whose session cookie then authenticates REST requests until `signOut`. tRPC takes
// bearer tokens only, so these go to the REST routes. The CLI signs in for one thing only: to have
// the session create a personal access token (`login --username`, and `tokens create`, whose token
// then belongs to no other token), after which the session is signed out.
//
// Cross-site request forgery rules judge a cookie's writes by their Origin. The sign-in itself
// sends none (a script's request: allowed whether the platform wants an Origin only from browsers or
// on every session write), then the session asks the platform for its own URL (`base_url`) and
// sends that origin on each write: this is the session's own client, so it is the platform's
// origin, even when --url reaches it past a proxy at another address. A platform that judges the
// Origin by the request's Host instead may refuse that: the write is then sent once more without an
// Origin, as a script sends it (a refusal happens before anything is done, so nothing is done twice).
import { CreatedToken, Settings, User } from "@flowplane/contract";
import type { z } from "zod";
import { restFailure, TIMEOUT_MS, unreachable } from "./client";
import type { Context } from "./context";
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
  async function send(
    method: string,
    path: string,
    body: unknown,
    { cookie, origin }: { cookie?: string; origin?: string } = {},
  ): Promise<{ response: Response; json: unknown }> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (cookie !== undefined) headers.cookie = `${SESSION_COOKIE}=${cookie}`;
    if (origin !== undefined) headers.origin = origin;
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

  // The Origin of the session's writes: not yet known, the platform's, or none (as a script).
  let origin: string | null | undefined;
  const write = async (path: string, body: unknown) => {
    if (origin === undefined) {
      const settings = "/api/v1/settings";
      const answer = await send("GET", settings, undefined, { cookie });
      const { base_url } = parsed(answer.json, Settings, settings);
      origin = URL.canParse(base_url) ? new URL(base_url).origin : null;
    }
    try {
      return await send("POST", path, body, { cookie, origin: origin ?? undefined });
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== "csrf_failed" || origin === null) {
        throw error;
      }
      origin = null;
      return send("POST", path, body, { cookie });
    }
  };

  return {
    async get(path, schema) {
      return parsed((await send("GET", path, undefined, { cookie })).json, schema, path);
    },
    async post(path, body, schema) {
      return parsed((await write(path, body)).json, schema, path);
    },
    async signOut() {
      await write("/account/logout", undefined);
    },
  };
}

/** What the token is for, and its scope, as POST /api/v1/user/tokens takes them. */
export interface TokenRequest {
  name: string;
  readOnly?: boolean;
  adminOptIn?: boolean;
  teamIds?: string[];
  expiresAt?: number | string;
}

/**
 * A personal access token made by a sign-in session: the password is asked for (or read from
 * stdin), the session creates the token and is signed out, whatever happened. Such a token belongs
 * to no other token, so no token's revocation (`logout`) takes it with it.
 */
export async function tokenBySignIn(
  context: Context,
  options: {
    url: string;
    username: string;
    /** The token, or (a function of the signed-in user) what to ask for. */
    request: TokenRequest | ((user: User) => TokenRequest);
    /** The command to run again once a refusal is fixed, for the hint. */
    again: string;
    /** Why the password is asked for: told to a person at the terminal first. */
    why?: string;
    /** Added to the message when no password can be read. */
    noPassword?: string;
  },
): Promise<{ user: User; issued: CreatedToken }> {
  const { url, username } = options;
  const { protocol, hostname } = new URL(url);
  if (protocol === "http:" && !isLoopback(hostname)) {
    context.warn(`${url} is not https: the password would cross the network unencrypted`);
  }
  if (options.why !== undefined) context.tell(options.why);
  const password = await context
    .readSecret(`Password for ${username} on ${url}: `)
    .catch((error: unknown) => {
      if (error instanceof CliError && options.noPassword !== undefined) {
        throw new CliError(error.message, error.code, [...error.details, options.noPassword]);
      }
      throw error;
    });
  const session = await signIn(url, username, password).catch((error: unknown) => {
    throw withHint(error, url, options.again);
  });
  try {
    const user = await session.get("/api/v1/user", User);
    const request = typeof options.request === "function" ? options.request(user) : options.request;
    const issued = await session.post("/api/v1/user/tokens", request, CreatedToken);
    return { user, issued };
  } catch (error) {
    throw withHint(error, url, options.again);
  } finally {
    // The session was only the way to the token: it ends here, whatever happened.
    await session.signOut().catch((error: unknown) => {
      context.warn(`the sign-in session could not be signed out: ${(error as Error).message}`);
    });
  }
}

/** What to do about the refusals a user can fix. */
function withHint(error: unknown, url: string, again: string): unknown {
  if (!(error instanceof CliError)) return error;
  const hints: Record<string, string> = {
    password_expired:
      `choose a new password in a browser (sign in at ${url}/sign-in, or ${url}/settings/profile), ` +
      `then run \`${again}\` again`,
  };
  const hint = hints[error.code];
  return hint
    ? new CliError(error.message, error.code, [...error.details, hint], error.status)
    : error;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
