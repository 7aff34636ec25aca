// Applications and hosted instances as a command line names them (rule.ts): by id or name, in the
// team given or else in all the caller's teams; an id outside them is fetched.
import type { Client } from "../client";
import { type Named, orNone, pick } from "./rule";
import { type TeamRef, teamRef, listTeams } from "./teams";

export interface ApplicationRef extends Named {
  team: TeamRef;
}

export interface InstanceRef extends Named {
  application: ApplicationRef;
}

async function listApplications(client: Client, team?: string) {
  const { teams, scope } = await listTeams(client, team);
  const applications = (
    await Promise.all(
      teams.map(async (t) =>
        (await client.applications.ofTeam.query({ teamId: t.id })).applications.map((a) => ({
          application: { id: a.id, name: a.name, where: `in team ${t.name}`, team: t },
          instances: a.instances,
        })),
      ),
    )
  ).flat();
  return { applications, scope, given: team !== undefined };
}

/** The application named by id or name, in the team given or else in all the caller's teams. */
export async function resolveApplication(
  client: Client,
  given: string,
  team?: string,
): Promise<ApplicationRef> {
  const { applications, scope, given: scoped } = await listApplications(client, team);
  return pick({
    kind: "application",
    given,
    scope,
    candidates: applications.map((a) => a.application),
    byId: scoped
      ? undefined
      : async (applicationId) => {
          const found = await orNone(client.applications.get.query({ applicationId }));
          if (!found) return undefined;
          const owner = teamRef(found.team);
          return { id: found.id, name: found.name, where: `in team ${owner.name}`, team: owner };
        },
  });
}

/** The hosted instance named by id or name, in the team given or else in all the caller's teams. */
export async function resolveInstance(
  client: Client,
  given: string,
  team?: string,
): Promise<InstanceRef> {
  const { applications, scope, given: scoped } = await listApplications(client, team);
  return pick<InstanceRef>({
    kind: "instance",
    given,
    scope,
    candidates: applications.flatMap(({ application, instances }) =>
      instances.map((i) => ({
        id: i.id,
        name: i.name,
        where: `in application ${application.name} of team ${application.team.name}`,
        application,
      })),
    ),
    byId: scoped
      ? undefined
      : async (instanceId) => {
          const found = await orNone(client.instances.get.query({ instanceId }));
          if (!found) return undefined;
          const owner = teamRef(found.team);
          const application = { ...found.application, where: `in team ${owner.name}`, team: owner };
          return { id: found.id, name: found.name, where: application.where, application };
        },
  });
}

/** What `--application` or `--instance` names, as ids: what a device or a token is assigned to. */
export async function resolveAssignment(
  client: Client,
  given: { application?: string; instance?: string },
  team?: string,
): Promise<{ application?: string; instance?: string }> {
  return {
    application:
      given.application === undefined
        ? undefined
        : (await resolveApplication(client, given.application, team)).id,
    instance:
      given.instance === undefined
        ? undefined
        : (await resolveInstance(client, given.instance, team)).id,
  };
}
