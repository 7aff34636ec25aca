// What a hosted instance's Node-RED is started with: its variables (its own and the platform's
// `FF_*`), the modules its palette installs (and whether it may), and its instance token.
import type { EnvVar } from "@flowplane/contract";
import { type ProjectDetail } from "@flowplane/db";
import { type InstanceSpec, type ModuleInstallError } from "@flowplane/runtime";
import { ApiError } from "../core/errors";
import type { EditorHosts } from "./editor-hosts";

/** Where an instance and its editor reach the platform (the runtime's options have them). */
export interface PlatformAddresses {
  /** Where instances reach the platform: its own listening address (known once it listens). */
  platformUrl: () => string;
  /** Where browsers open instances' editors (through the platform's proxy). */
  hosts: EditorHosts;
  /** The platform's public address (BASE_URL): where an editor sends a browser to sign in. */
  baseUrl: string;
}

/** What Node-RED starts with: its variables (its own and the platform's), modules, token. */
export async function instanceSpec(
  options: PlatformAddresses,
  project: ProjectDetail,
  token: string,
): Promise<InstanceSpec> {
  const own = project.settings.env ?? [];
  const env = [...own, ...platformEnv(project, options.hosts.editorUrl(project.name))];
  const version = project.stack_properties.nodered;
  return {
    id: project.id,
    name: project.name,
    teamId: project.team_id,
    nodeRedVersion: typeof version === "string" ? version : "",
    env: {
      ...Object.fromEntries(env.map((variable) => [variable.name, variable.value])),
      // Where the editor sends a browser to sign in: the platform's public address.
      FLOWPLANE_BASE_URL: options.baseUrl,
      // Where the editor's header leads back to: the instance's page in the console.
      FLOWPLANE_CONSOLE_URL: `${options.baseUrl}/teams/${project.team_id}/instances/${project.id}`,
    },
    platformUrl: options.platformUrl(),
    token,
    modules: project.settings.palette?.modules ?? {},
    paletteInstall: paletteInstall(project),
  };
}

/** Whether the instance's palette may install modules: yes, unless its type says no. */
export function paletteInstall(project: Pick<ProjectDetail, "project_type_properties">): boolean {
  const palette = project.project_type_properties.palette as { allowInstall?: unknown } | undefined;
  return palette?.allowInstall !== false;
}

/** A failed install of the instance's modules, as the API answers it. */
export const moduleInstallFailed = (error: ModuleInstallError) =>
  new ApiError(400, "module_install_failed", error.message);

/** The platform's variables (`FF_*`), read-only, set on every start. */
export function platformEnv(
  project: Pick<ProjectDetail, "id" | "name">,
  url: string | null,
): Required<EnvVar>[] {
  return [
    { name: "FF_INSTANCE_ID", value: project.id, hidden: false },
    { name: "FF_INSTANCE_NAME", value: project.name, hidden: false },
    { name: "FF_INSTANCE_URL", value: url ?? "", hidden: false },
    { name: "FF_PROJECT_ID", value: project.id, hidden: false },
    { name: "FF_PROJECT_NAME", value: project.name, hidden: false },
  ];
}
