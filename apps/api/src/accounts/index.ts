// The accounts area: users (the caller's own account and administrators' management of every
// user), sign-in sessions (/account/login, /account/logout) and the account pages.
import { deleteStaleSessions } from "@flowplane/db";
import type { Area, Platform } from "../plugins/area";
import { InitialPassword } from "./initial-password";
import { accountPages } from "./pages/index";
import { type SessionOptions, sessionRoutes } from "./sessions";
import { userRouter } from "./user";
import { usersRouter } from "./users";

const sessionOptions = (platform: Platform): SessionOptions => ({
  db: platform.db,
  tokenSecret: platform.tokenSecret,
  baseUrl: platform.baseUrl,
  sessionMaxAgeMs: platform.sessions.maxAgeMs,
  signInLimits: platform.limits.signIn,
  initialPassword: platform.services.initialPassword,
});

export const accounts = {
  procedures: { user: userRouter, users: usersRouter },
  /** The first administrator's first password file, while the platform keeps one. */
  async start(_app, { options }) {
    const file = options.initialPasswordFile;
    return { initialPassword: file !== undefined ? new InitialPassword(file) : undefined };
  },
  /** Signing in and out. */
  account: async (app, platform) => sessionRoutes(app, sessionOptions(platform)),
  pages: (platform) =>
    accountPages({
      account: sessionOptions(platform),
      editorHosts: platform.services.editorHosts!,
    }),
  async sweep({ db, sessions }, log) {
    const stale = await deleteStaleSessions(db, new Date(), sessions.idleMs);
    if (stale > 0) log.info({ count: stale }, "deleted ended sessions");
  },
} satisfies Area;
export type { SessionOptions } from "./sessions";
export { InitialPassword } from "./initial-password";
export { userRouter } from "./user";
export { recordFirstAdmin } from "./events";
