// People with a password and a session, for the page tests over HTTP: made through the API by the
// administrator, put in teams with their role, signed in; and the API called with their session.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { startServer, type TestServer } from "./harness";

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

/**
 * A server on the in-memory driver with a team its owner made (an owner, a member and a viewer,
 * signed in), an application and an instance in it: where the page tests of an application's
 * things start.
 */
export async function pagesTeam(teamName: string, instanceName: string) {
  const server = await startServer({
    instances: "in-memory",
    rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
  });
  const person = (teams: { id: string; role: number }[] = []) => signedInPerson(server, teams);
  const owner = await person();
  const teamId = (await asPerson(server, owner, "POST", "/api/v1/teams", { name: teamName })).body
    .id as string;
  const member = await person([{ id: teamId, role: Role.member }]);
  const viewer = await person([{ id: teamId, role: Role.viewer }]);
  const application = await asPerson(server, owner, "POST", "/api/v1/applications", {
    name: "Line 1",
    teamId,
  });
  const applicationId = application.body.id as string;
  const instance = await asPerson(server, owner, "POST", "/api/v1/projects", {
    name: instanceName,
    applicationId,
  });
  if (instance.status !== 200) throw new Error(`instance not created: ${instance.text}`);
  const instanceId = instance.body.id as string;
  return { server, person, owner, member, viewer, teamId, applicationId, instanceId };
}
