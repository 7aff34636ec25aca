// Sign-in and sign-out (FlowFuse's /account/login and /account/logout): a server-side session whose
// value goes to the browser in an HttpOnly cookie and whose digest is kept in the database.
import { generateToken, tokenDigest, verifyPassword } from "@flowplane/auth";
import { LoginInput } from "@flowplane/contract";
import {
  type Db,
  deleteSession,
  findUserByLogin,
  insertSession,
  type UserRow,
} from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Identity } from "../core/credentials/identity";
import { SESSION_COOKIE } from "../core/credentials/sessions";
import { ApiError, validationError } from "../core/errors";
import type { SignInLimits } from "../core/limits";
import { recordUserEvent } from "./events";
import type { InitialPassword } from "./initial-password";

export interface SessionOptions {
  db: Db;
  tokenSecret: string;
  baseUrl: string;
  sessionMaxAgeMs: number;
  /** Sign-in attempts per client address, failures per account (plugins/rate-limits.ts). */
  signInLimits: SignInLimits;
  /** The first password's file, which the sign-in page mentions while it is there. */
  initialPassword?: InitialPassword;
}

/** The same reply, in about the same time, for an unknown user and a wrong password. */
const badCredentials = () => new ApiError(401, "unauthorized", "Wrong username or password");

/**
 * Checks a username (or email) and password, within the sign-in limits: failures count against
 * the account however it was named, attempts against `source` (default: the client's address).
 * Unknown users are checked against a decoy hash, so the time does not tell them apart from a
 * wrong password. Suspended users are refused only once their password is right.
 */
export async function checkCredentials(
  options: { db: Db; signInLimits: SignInLimits },
  request: FastifyRequest,
  login: string,
  password: string,
  source?: string,
): Promise<UserRow> {
  const user = await findUserByLogin(options.db, login);
  const account = user ? `user:${user.id}` : `login:${login.toLowerCase()}`;
  return options.signInLimits.attempt(request, { account, source }, async () => {
    const valid = await verifyPassword(password, user?.password_hash);
    if (!user || !valid) throw badCredentials();
    if (user.suspended) throw new ApiError(403, "user_suspended", "This account is suspended");
    return user;
  });
}

/** Starts a session for the user: its row and audit entry, and the cookie on the reply. */
export async function startSession(
  reply: FastifyReply,
  options: SessionOptions,
  user: UserRow,
): Promise<void> {
  const value = generateToken("session");
  const expiresAt = new Date(Date.now() + options.sessionMaxAgeMs);
  await options.db.transaction().execute(async (trx) => {
    await insertSession(trx, {
      userId: user.id,
      digest: tokenDigest(options.tokenSecret, value),
      expiresAt,
    });
    await recordUserEvent(trx, "account.login", { userId: user.id, tokenId: null }, user);
  });
  reply.setCookie(SESSION_COOKIE, value, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: options.baseUrl.startsWith("https:"),
    expires: expiresAt,
  });
}

/**
 * Signs out: the caller's session (when they are signed in) deleted with its audit entry, and the
 * cookie cleared. POST /account/logout and the pages' sign-out form share it.
 */
export async function endSession(
  reply: FastifyReply,
  options: Pick<SessionOptions, "db">,
  auth: Identity | undefined,
): Promise<void> {
  const session = auth?.kind === "session" ? auth : undefined;
  if (session) {
    await options.db.transaction().execute(async (trx) => {
      await deleteSession(trx, session.id);
      await recordUserEvent(
        trx,
        "account.logout",
        { userId: session.userId, tokenId: null },
        { id: session.userId, username: session.username },
      );
    });
  }
  reply.clearCookie(SESSION_COOKIE, { path: "/" });
}

/** POST /account/login and /account/logout (registered in the people's /account context). */
export async function sessionRoutes(app: FastifyInstance, options: SessionOptions) {
  app.post("/login", async (request, reply) => {
    const parsed = LoginInput.safeParse(request.body ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    const { username, password } = parsed.data;
    const user = await checkCredentials(options, request, username, password);
    await startSession(reply, options, user);
    return { status: "okay", ...(user.password_expired ? { password_expired: true } : {}) };
  });

  app.post("/logout", async (request, reply) => {
    await endSession(reply, options, request.auth);
    return { status: "okay" };
  });
}
