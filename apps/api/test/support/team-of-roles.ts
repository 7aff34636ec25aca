// The team most area tests start from: made by its owner through the API, with a member and a
// viewer the harness adds, and an outsider who is in no team of it (for the 404s of another team).
import { Role } from "@flowplane/contract";
import type { TestServer } from "./harness";

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
