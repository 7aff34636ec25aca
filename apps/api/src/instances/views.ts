// How instances look on the wire: the summary in lists, the status, and the whole instance, with
// what the runtime reports merged in.
import {
  type EnvVar,
  type Instance,
  type InstanceState,
  type InstanceStatus,
  type InstanceSummary,
  PLATFORM_ENV_PREFIX,
} from "@flowplane/contract";
import type { ProjectDetail, ProjectSummaryRow } from "@flowplane/db";
import { platformEnv } from "./spec";
import type { Context } from "../core/trpc";
import { teamSummary } from "../teams/index";

const instancePath = (baseUrl: string, id: string) => `${baseUrl}/api/v1/projects/${id}`;

/** The runtime's view of the instance: FlowFuse's `meta` and the editor's URL. */
export async function runtimeOf(
  project: Pick<ProjectDetail, "id" | "name" | "state" | "in_flight">,
  ctx: Pick<Context, "instances">,
) {
  if (!ctx.instances) {
    const state: InstanceState =
      project.in_flight ?? (project.state === "suspended" ? "suspended" : "unknown");
    return { meta: { state }, url: null };
  }
  const { meta, url } = await ctx.instances.status(project);
  return { meta, url };
}

export async function instanceStatusOf(
  project: Pick<ProjectDetail, "id" | "name" | "state" | "in_flight">,
  ctx: Pick<Context, "instances">,
): Promise<InstanceStatus> {
  const { meta } = await runtimeOf(project, ctx);
  return { id: project.id, name: project.name, meta: { ...meta, isDeploying: false } };
}

export async function instanceSummary(
  project: ProjectSummaryRow,
  ctx: Pick<Context, "instances" | "baseUrl">,
): Promise<InstanceSummary> {
  const { url } = await runtimeOf(project, ctx);
  return {
    id: project.id,
    name: project.name,
    url,
    createdAt: project.created_at.toISOString(),
    updatedAt: project.updated_at.toISOString(),
    links: { self: instancePath(ctx.baseUrl, project.id) },
  };
}

/** The instance's own variables with hidden values blank, then the platform's `FF_*`. */
export function visibleEnv(project: ProjectDetail, url: string | null) {
  const own: Required<EnvVar>[] = (project.settings.env ?? [])
    .filter((variable) => !variable.name.startsWith(PLATFORM_ENV_PREFIX))
    .map((variable) => ({
      name: variable.name,
      value: variable.hidden ? "" : variable.value,
      hidden: variable.hidden ?? false,
    }));
  return [...own, ...platformEnv(project, url)];
}

export async function instanceView(
  project: ProjectDetail,
  ctx: Pick<Context, "instances" | "baseUrl">,
): Promise<Instance> {
  const { meta, url } = await runtimeOf(project, ctx);
  const base = ctx.baseUrl;
  return {
    id: project.id,
    name: project.name,
    safeName: project.name.toLowerCase(),
    url,
    hostname: url ? new URL(url).host : "",
    createdAt: project.created_at.toISOString(),
    updatedAt: project.updated_at.toISOString(),
    links: { self: instancePath(base, project.id) },
    application: {
      id: project.application_id,
      name: project.application_name,
      description: project.application_description,
      links: { self: `${base}/api/v1/applications/${project.application_id}` },
    },
    team: teamSummary(
      { id: project.team_id, name: project.team_name, slug: project.team_slug },
      base,
    ),
    projectType: { id: project.project_type_id, name: project.project_type_name },
    stack: {
      id: project.stack_id,
      name: project.stack_name,
      label: project.stack_label,
      properties: project.stack_properties,
      replacedBy: project.stack_replaced_by,
      links: { self: `${base}/api/v1/stacks/${project.stack_id}` },
    },
    template: {
      id: project.template_id,
      name: project.template_name,
      description: project.template_description,
      settings: project.template_settings,
      policy: project.template_policy,
      links: { self: `${base}/api/v1/templates/${project.template_id}` },
    },
    settings: {
      env: visibleEnv(project, url),
      palette: { modules: project.settings.palette?.modules ?? {} },
    },
    launcherSettings: { healthCheckInterval: 7500, disableAutoSafeMode: false },
    meta: {
      ...meta,
      isDeploying: false,
      ...(typeof project.stack_properties.nodered === "string" && {
        versions: { "node-red": project.stack_properties.nodered },
      }),
    },
    flowLastUpdatedAt: project.flows_updated_at?.toISOString() ?? null,
  };
}
