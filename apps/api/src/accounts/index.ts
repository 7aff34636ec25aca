// The accounts area: users (the caller's own account and administrators' management of every
// user), sign-in sessions (/account/login, /account/logout) and the account pages.
import { accountPages } from "./pages/index";
import { SESSION_COOKIE, sessionRoutes } from "./sessions";
import { userRouter } from "./user";
import { usersRouter } from "./users";

export const accounts = {
  procedures: { user: userRouter, users: usersRouter },
  /** Routes outside tRPC: signing in and out. */
  routes: sessionRoutes,
  pages: accountPages,
  sessionCookie: SESSION_COOKIE,
};
export type { SessionOptions } from "./sessions";
export { InitialPassword } from "./initial-password";
export { userRouter } from "./user";
