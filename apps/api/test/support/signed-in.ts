// People with a password and a session, for the page tests over HTTP: made through the API by the
// administrator, put in teams with their role, signed in; and the API called with their session.
import { addMember } from "@flowplane/db";
import type { TestServer } from "./harness";

export interface SignedInPerson {
  id: string;
  username: string;
  password: string;
  sid: string;
}

export async function signedInPerson(
  server: TestServer,
  teams: { id: string; role: number }[] = [],
): Promise<SignedInPerson> {
  const user = await server.userWithPassword();
  for (const team of teams) {
    await addMember(server.db, { teamId: team.id, userId: user.id, role: team.role });
  }
  return { ...user, sid: await server.signIn(user.username, user.password) };
}

/** The API called as the person (their session cookie, this platform's Origin). */
export const asPerson = (
  server: TestServer,
  who: { sid: string },
  method: string,
  path: string,
  body?: unknown,
) => server.asSession(who.sid, method, path, { body });
