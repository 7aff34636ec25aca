// Users as a command line names them (rule.ts), for administrators: by id, or by username, found
// through the list's `query` and compared exactly (usernames are unique, so no name is ambiguous).
import type { User } from "@flowplane/contract";
import { asAdministrator, type Client } from "../client";
import { CliError } from "../errors";
import { listEvery, pick } from "./rule";

/** What a user who is not an administrator is told when a users' command is refused. */
export const USER_ADMINISTRATION =
  "users are managed only with an administrator's token with admin opt-in";

/** The user named by id or username. */
export async function resolveUser(client: Client, given: string): Promise<User> {
  const username = given.toLowerCase();
  const users = await listEvery("users", (cursor) =>
    asAdministrator(client.users.all.query({ query: given, cursor }), USER_ADMINISTRATION),
  );
  const named = (user: User) => ({ id: user.id, name: user.username, where: user.email ?? "-" });
  const found = await pick({
    kind: "user",
    given,
    scope: "",
    candidates: users.filter((user) => user.username === username || user.id === given).map(named),
    byId: async (userId) => {
      try {
        const user = await asAdministrator(
          client.users.byId.query({ userId }),
          USER_ADMINISTRATION,
        );
        users.push(user);
        return named(user);
      } catch (error) {
        if (error instanceof CliError && error.status === 404) return undefined;
        throw error;
      }
    },
  });
  return users.find((user) => user.id === found.id)!;
}
