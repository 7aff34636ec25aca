// What the account tests share (account.test.ts: `login --username` and `logout`;
// account-tokens.test.ts: the tokens made after it, and a token the server refuses): users the
// administrator creates, each with one password, signing in with it, and what the CLI stored.
import { readFile } from "node:fs/promises";
import { expect } from "vitest";
import { createUserAs, loginAs, loginFileOf, newUser, type Outcome, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

export const PASSWORD = "correct horse battery staple";

/**
 * A server and its administrator for the test file (`serveWithAdmin`, handed to `started`), and
 * the helpers that use them.
 */
export function serveAccounts(started: (served: { server: TestServer; admin: User }) => void) {
  let current: { server: TestServer; admin: User } | undefined;
  serveWithAdmin((served) => {
    current = served;
    started(served);
  });
  const served = () => current!;
  let counter = 0;
  return {
    /** How many users `createUser` has made: the last one is member-<this>. */
    usersCreated: () => counter,

    /** A new user with PASSWORD, created by the administrator through the CLI. */
    async createUser(...options: string[]): Promise<{ id: string; username: string }> {
      const username = `member-${++counter}`;
      const created = await createUserAs(
        served().admin,
        PASSWORD,
        username,
        `Member ${counter}`,
        ...options,
        "--json",
      );
      expect(created.status).toBe(0);
      return JSON.parse(created.stdout);
    },

    loginWithPassword: (user: User, username: string, password = PASSWORD, ...more: string[]) =>
      loginAs(user, served().server.url, username, password, ...more),

    /** Someone using only `token`, through the environment. */
    holderOf: (token: string) =>
      newUser({ FLOWPLANE_TOKEN: token, FLOWPLANE_URL: served().server.url }),

    async sessionsOf(userId: string): Promise<number> {
      const rows = await served()
        .server.db.selectFrom("sessions")
        .select("id")
        .where("user_id", "=", userId)
        .execute();
      return rows.length;
    },
  };
}

export const storedLogin = async (user: User) =>
  JSON.parse(await readFile(loginFileOf(user), "utf8"));

export function expectNoSecrets(outcomes: Outcome[], secrets: string[]) {
  for (const outcome of outcomes) {
    for (const secret of secrets) {
      expect(outcome.stdout).not.toContain(secret);
      expect(outcome.stderr).not.toContain(secret);
    }
  }
}
