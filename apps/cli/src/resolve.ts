// How a command line names a thing: the one rule of every command, and the look-ups that apply it.
// A thing is named by its id, by its slug (teams) or by its name (any case). Among the things the
// command can mean (its scope: a team, an application, all the caller's teams …) an exact id wins;
// then a slug; then the name, which must name exactly one: a name that several share is refused,
// listing them (name, id, where) so the person can give the id, and nothing at all is "not found",
// saying what was looked for where. An id outside the scope's lists (an administrator's reach into
// a team they are not in) is fetched by id where the API offers that.
import { isId, type Pipeline } from "@flowplane/contract";
import type { Client } from "./client";
import { CliError } from "./errors";
import { when } from "./output";

/** A thing a command may mean: what it is called, and where it is (for the list of candidates). */
export interface Named {
  id: string;
  name: string;
  slug?: string;
  where: string;
}

interface Search<T extends Named> {
  /** `instance`, `device group` … */
  kind: string;
  /** What the person typed. */
  given: string;
  /** Where it was looked for, as it follows the kind: `in team Plant`, `of instance line-1`. */
  scope: string;
  candidates: readonly T[];
  /** The thing with this id, when the lists do not hold it (undefined: there is none). */
  byId?: (id: string) => Promise<T | undefined>;
}

/** The one rule: an exact id, else a slug, else the one thing of that name. */
export async function pick<T extends Named>(search: Search<T>): Promise<T> {
  const { kind, given, candidates } = search;
  const scope = search.scope ? ` ${search.scope}` : "";
  const exact = candidates.find((c) => c.id === given);
  if (exact) return exact;
  const bySlug = candidates.find((c) => c.slug !== undefined && c.slug === given);
  if (bySlug) return bySlug;
  const byName = unique(candidates.filter((c) => c.name.toLowerCase() === given.toLowerCase()));
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new CliError(
      `${byName.length} ${kind}s${scope} are named "${given}": give the id of the one you mean`,
      "ambiguous_name",
      byName.map((c) => `${c.name}  id ${c.id}  ${c.where}`),
    );
  }
  const fetched = search.byId && isId(given) ? await search.byId(given) : undefined;
  if (fetched) return fetched;
  const ways = kind === "team" ? "id, slug or name" : "id or name";
  throw new CliError(`no ${kind}${scope} has the ${ways} "${given}"`, "not_found");
}

function unique<T extends Named>(things: readonly T[]): T[] {
  return things.filter((thing, at) => things.findIndex((t) => t.id === thing.id) === at);
}

/** A request's 404 (or 400 for a malformed id) as "there is none". */
async function orNone<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    const status = (error as { data?: { httpStatus?: number } }).data?.httpStatus;
    if (status === 404 || status === 400 || status === 403) return undefined;
    throw error;
  }
}

/** Every item of a paged list. */
async function everyPage<T>(
  page: (cursor?: string) => Promise<{ items: T[]; next?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const { items, next } = await page(cursor);
    all.push(...items);
    cursor = next;
  } while (cursor !== undefined);
  return all;
}

export interface TeamRef extends Named {
  slug: string;
}

const teamRef = (t: { id: string; name: string; slug: string }): TeamRef => ({
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
async function teamsOf(
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

export interface ApplicationRef extends Named {
  team: TeamRef;
}

export interface InstanceRef extends Named {
  application: ApplicationRef;
}

async function applicationsOf(client: Client, team?: string) {
  const { teams, scope } = await teamsOf(client, team);
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
  const { applications, scope, given: scoped } = await applicationsOf(client, team);
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
  const { applications, scope, given: scoped } = await applicationsOf(client, team);
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

export interface DeviceRef extends Named {
  team: TeamRef;
}

/** The device named by id or name, in the team given or else in all the caller's teams. */
export async function resolveDevice(
  client: Client,
  given: string,
  team?: string,
): Promise<DeviceRef> {
  const { teams, scope } = await teamsOf(client, team);
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
        everyPage(async (cursor) => {
          const page = await client.devices.ofTeam.query({
            teamId: t.id,
            query: given.slice(0, 128),
            cursor,
          });
          return { items: page.devices, next: page.meta.next_cursor };
        }),
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
  const groups = await everyPage(async (cursor) => {
    const page = await client.deviceGroups.list.query({ applicationId: application.id, cursor });
    return { items: page.groups, next: page.meta.next_cursor };
  });
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
  const groups = await everyPage(async (cursor) => {
    const page = await client.deviceGroups.ofTeam.query({ teamId: team.id, cursor });
    return { items: page.groups, next: page.meta.next_cursor };
  });
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

/** A thing already found: its id and its name. */
export interface Ref {
  id: string;
  name: string;
}

type SnapshotScope = { instance: Ref } | { device: Ref } | { application: Ref };

/** The snapshot named by id or name among an instance's, a device's or an application's. */
export async function resolveSnapshot(
  client: Client,
  scope: SnapshotScope,
  given: string,
): Promise<Named> {
  const [owner, list] =
    "instance" in scope
      ? [
          `of instance ${scope.instance.name}`,
          (cursor?: string) =>
            client.snapshots.ofInstance.query({ instanceId: scope.instance.id, cursor }),
        ]
      : "device" in scope
        ? [
            `of device ${scope.device.name}`,
            (cursor?: string) =>
              client.snapshots.ofDevice.query({ deviceId: scope.device.id, cursor }),
          ]
        : [
            `of application ${scope.application.name}`,
            (cursor?: string) =>
              client.snapshots.ofApplication.query({
                applicationId: scope.application.id,
                cursor,
              }),
          ];
  const snapshots = await everyPage(async (cursor) => {
    const page = await list(cursor);
    return { items: page.snapshots, next: page.meta.next_cursor };
  });
  return pick({
    kind: "snapshot",
    given,
    scope: owner,
    candidates: snapshots.map((s) => ({
      id: s.id,
      name: s.name,
      where: `taken ${when(s.createdAt)}${s.project ? ` of instance ${s.project.name}` : ""}${s.device ? ` of device ${s.device.name}` : ""}`,
    })),
  });
}

export type PipelineRef = Pipeline & Named;

/** The pipeline named by id or name, in the team given or else in all the caller's teams. */
export async function resolvePipeline(
  client: Client,
  given: string,
  team?: string,
): Promise<PipelineRef> {
  const { teams, scope } = await teamsOf(client, team);
  const lists = await Promise.all(
    teams.map(async (t) =>
      (await client.pipelines.ofTeam.query({ teamId: t.id })).pipelines.map((p) => ({
        ...p,
        where: `in application ${p.application?.name ?? "?"} of team ${t.name}`,
      })),
    ),
  );
  return pick<PipelineRef>({
    kind: "pipeline",
    given,
    scope,
    candidates: lists.flat(),
    byId:
      team === undefined
        ? async (pipelineId) => {
            const found = await orNone(client.pipelines.get.query({ pipelineId }));
            return found && { ...found, where: "" };
          }
        : undefined,
  });
}

/** The stage named by id or name in the pipeline. */
export function resolveStage(
  pipeline: PipelineRef,
  given: string,
): Promise<PipelineRef["stages"][number] & Named> {
  return pick({
    kind: "stage",
    given,
    scope: `in pipeline ${pipeline.name}`,
    candidates: pipeline.stages.map((s, at) => ({
      ...s,
      where: `stage ${at + 1} of ${pipeline.stages.length}`,
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

/** The caller's personal access token named by id or name. */
export async function resolveToken(client: Client, given: string): Promise<Named> {
  const { tokens } = await client.token.all.query();
  return pick({
    kind: "token",
    given,
    scope: "of yours",
    candidates: tokens.map((t) => ({
      id: t.id,
      name: t.name,
      where: `expires ${when(t.expiresAt)}, last used ${when(t.lastUsedAt)}`,
    })),
  });
}

/** The team's MQTT client named by id or username. */
export async function resolveBrokerClient(
  client: Client,
  team: TeamRef,
  given: string,
): Promise<Named> {
  const clients = await everyPage(async (cursor) => {
    const page = await client.broker.listClients.query({ teamId: team.id, cursor });
    return { items: page.clients, next: page.meta.next_cursor };
  });
  return pick({
    kind: "MQTT client",
    given,
    scope: `of team ${team.name}`,
    candidates: clients.map((c) => ({
      id: c.id,
      name: c.username,
      where: c.owner
        ? `of ${c.owner.instanceType} ${c.owner.name}`
        : `created ${when(c.createdAt)}`,
    })),
  });
}

/** The broker token named by id or name (administrators). */
export async function resolveBrokerToken(client: Client, given: string): Promise<Named> {
  const { tokens } = await client.broker.listTokens.query();
  return pick({
    kind: "broker token",
    given,
    scope: "",
    candidates: tokens.map((t) => ({
      id: t.id,
      name: t.name,
      where: `created ${when(t.createdAt)}`,
    })),
  });
}

/** The team type named by id or name, active or not. */
export async function resolveTeamType(client: Client, given: string) {
  const types = await everyPage(async (cursor) => {
    const page = await client.teamTypes.all.query({ filter: "all", limit: 1000, cursor });
    return { items: page.types, next: page.meta.next_cursor };
  });
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
