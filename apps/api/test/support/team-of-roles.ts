// The team most area tests start from: made by its owner through the API, with a member and a
// viewer the harness adds, and an outsider who is in no team of it (for the 404s of another team).
import { Role } from "@flowplane/contract";
import { startServer, type TestServer } from "./harness";
import { createTeam, makeUser, type TestTeam, type TestUser } from "./team-fixtures";

/** A user and their token. */
export interface Person {
  id: string;
  token: string;
}

export interface TeamOfRoles {
  teamId: string;
  owner: Person;
  member: Person;
  viewer: Person;
  outsider: Person;
}

/** A team named `name`, created by `owner` (a new user unless given), and its other roles. */
export async function teamOfRoles(
  server: TestServer,
  name: string,
  owner?: Person,
): Promise<TeamOfRoles> {
  owner ??= await server.user();
  const team = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name },
  });
  const teamId = team.body.id as string;
  const member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
  const viewer = await server.user({ teams: [{ id: teamId, role: Role.viewer }] });
  const outsider = await server.user();
  return { teamId, owner, member, viewer, outsider };
}

/**
 * A server on the in-memory driver and a team made by its owner (`makeUser`, `createTeam`), with a
 * user of the team in each role `roles` names, made in that order: where most area tests start
 * (at the top of the file, `const { server, owner, team } = await serverWithTeam()`).
 */
export async function serverWithTeam<R extends string = never>(
  roles: Record<R, number> = {} as Record<R, number>,
): Promise<
  { server: TestServer; owner: TestUser; team: TestTeam; teamId: string } & Record<R, TestUser>
> {
  const server = await startServer({ instances: "in-memory" });
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  const users = {} as Record<R, TestUser>;
  for (const [name, role] of Object.entries(roles) as [R, number][]) {
    users[name] = await makeUser(server, { teams: [{ id: team.id, role }] });
  }
  return { server, owner, team, teamId: team.id, ...users };
}
