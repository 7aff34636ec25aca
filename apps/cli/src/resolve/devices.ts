// Devices, device groups and provisioning tokens as a command line names them (rule.ts): a
// device by id or name in the team given or all the caller's; a group in its application or team.
import { isId } from "@flowplane/contract";
import type { Client } from "../client";
import { when } from "../output";
import { listEvery, type Named, orNone, pick, type Ref } from "./rule";
import { type TeamRef, teamRef, listTeams } from "./teams";

export interface DeviceRef extends Named {
  team: TeamRef;
}

/** The device named by id or name, in the team given or else in all the caller's teams. */
export async function resolveDevice(
  client: Client,
  given: string,
  team?: string,
): Promise<DeviceRef> {
  const { teams, scope } = await listTeams(client, team);
  const inScope = new Set(teams.map((t) => t.id));
  const device = (d: {
    id: string;
    name: string;
    team: { id: string; name: string; slug: string };
  }) => ({
    id: d.id,
    name: d.name,
    where: `in team ${d.team.name}`,
    team: teamRef(d.team),
  });
  // The list is searched by name (devices are many); an id is fetched.
  const [named, byId] = await Promise.all([
    Promise.all(
      teams.map(async (t) =>
        listEvery("devices", (cursor) =>
          client.devices.ofTeam.query({
            teamId: t.id,
            query: given.slice(0, 128),
            cursor,
          }),
        ),
      ),
    ),
    isId(given) ? orNone(client.devices.byId.query({ deviceId: given })) : undefined,
  ]);
  const candidates = named.flat().map(device);
  if (byId && inScope.has(byId.team.id)) candidates.unshift(device(byId));
  return pick({
    kind: "device",
    given,
    scope,
    candidates,
    byId: team === undefined && byId ? async () => device(byId) : undefined,
  });
}

/** The device group named by id or name in the application. */
export async function resolveDeviceGroup(
  client: Client,
  application: Ref,
  given: string,
): Promise<Named> {
  const groups = await listEvery("groups", (cursor) =>
    client.deviceGroups.list.query({ applicationId: application.id, cursor }),
  );
  return pick({
    kind: "device group",
    given,
    scope: `in application ${application.name}`,
    candidates: groups.map((g) => ({ id: g.id, name: g.name, where: `${g.deviceCount} devices` })),
  });
}

/** The team's device group named by id or name, in whichever of its applications. */
export async function resolveTeamDeviceGroup(
  client: Client,
  team: TeamRef,
  given: string,
): Promise<Named> {
  const groups = await listEvery("groups", (cursor) =>
    client.deviceGroups.ofTeam.query({ teamId: team.id, cursor }),
  );
  return pick({
    kind: "device group",
    given,
    scope: `in team ${team.name}`,
    candidates: groups.map((g) => ({
      id: g.id,
      name: g.name,
      where: `in application ${g.application.name}`,
    })),
  });
}

/** The team's provisioning token named by id or name. */
export async function resolveProvisioningToken(
  client: Client,
  team: TeamRef,
  given: string,
): Promise<Named> {
  const { tokens } = await client.provisioningTokens.list.query({ teamId: team.id });
  return pick({
    kind: "provisioning token",
    given,
    scope: `of team ${team.name}`,
    candidates: tokens.map((t) => ({
      id: t.id,
      name: t.name,
      where: `created ${when(t.createdAt)}`,
    })),
  });
}
