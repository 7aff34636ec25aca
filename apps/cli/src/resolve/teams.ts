// Teams, team types and members as a command line names them (rule.ts): a team by id, slug or
// name among the caller's teams, or any team by id or slug; a member by id or username.
import type { Client } from "../client";
import { listEvery, type Named, orNone, pick } from "./rule";

export interface TeamRef extends Named {
  slug: string;
}

export const teamRef = (t: { id: string; name: string; slug: string }): TeamRef => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  where: `slug ${t.slug}`,
});

/** The team named by id, slug or name among the caller's teams (or, by id, slug or name, any team). */
export async function resolveTeam(client: Client, given: string): Promise<TeamRef> {
  const { teams } = await client.user.teams.query();
  return pick({
    kind: "team",
    given,
    scope: "among your teams",
    candidates: teams.map(teamRef),
    byId: async (id) =>
      (await orNone(client.team.byId.query({ teamId: id }).then(teamRef))) ??
      (await orNone(client.team.bySlug.query({ slug: id }).then(teamRef))),
  });
}

/** The team given, or (none given) every team of the caller's, and how to say which. */
export async function listTeams(
  client: Client,
  team?: string,
): Promise<{ teams: TeamRef[]; scope: string }> {
  if (team !== undefined) {
    const found = await resolveTeam(client, team);
    return { teams: [found], scope: `in team ${found.name}` };
  }
  const { teams } = await client.user.teams.query();
  return { teams: teams.map(teamRef), scope: "in your teams" };
}

/** The team type named by id or name, active or not. */
export async function resolveTeamType(client: Client, given: string) {
  const types = await listEvery("types", (cursor) =>
    client.teamTypes.all.query({ filter: "all", limit: 1000, cursor }),
  );
  return pick({
    kind: "team type",
    given,
    scope: "",
    candidates: types.map((t) => ({ ...t, where: t.active ? "active" : "inactive" })),
  });
}

/** The team's member named by id or username; yourself without listing the members. */
export async function resolveMember(client: Client, team: TeamRef, given: string): Promise<Named> {
  const me = await client.user.me.query();
  if (given === me.id || given.toLowerCase() === me.username) {
    return { id: me.id, name: me.username, where: "you" };
  }
  const { members } = await client.member.list.query({ teamId: team.id });
  return pick({
    kind: "member",
    given,
    scope: `of team ${team.name}`,
    candidates: members.map((m) => ({ id: m.id, name: m.username, where: m.name })),
  });
}
