// How snapshots look on the wire: FlowFuse's Snapshot (metadata) and FullSnapshot (content
// without credentials; hidden variables blank).
import type { FullSnapshot, Snapshot, UserSummary } from "@flowplane/contract";
import type { SnapshotRow, SnapshotSummaryRow } from "@flowplane/db";

export const snapshotPath = (baseUrl: string, id: string) => `${baseUrl}/api/v1/snapshots/${id}`;

function userOf(row: SnapshotSummaryRow): UserSummary | null {
  if (row.user_id === null) return null;
  return {
    id: row.user_id,
    username: row.user_username!,
    name: row.user_name!,
    admin: row.user_admin!,
    suspended: row.user_suspended!,
    createdAt: row.user_created_at!.toISOString(),
  };
}

export function snapshotView(row: SnapshotSummaryRow, baseUrl: string): Snapshot {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ownerType: row.owner_type,
    ...(row.project_id !== null && { projectId: row.project_id }),
    ...(row.device_id !== null && { deviceId: row.device_id }),
    user: userOf(row),
    ...(row.project_id !== null &&
      row.project_name !== null && {
        project: {
          id: row.project_id,
          name: row.project_name,
          createdAt: row.project_created_at!.toISOString(),
          updatedAt: row.project_updated_at!.toISOString(),
          links: { self: `${baseUrl}/api/v1/projects/${row.project_id}` },
        },
      }),
    ...(row.device_id !== null &&
      row.device_name !== null && {
        device: {
          id: row.device_id,
          name: row.device_name,
          links: { self: `${baseUrl}/api/v1/devices/${row.device_id}` },
        },
      }),
    modules: row.modules ?? {},
    links: { self: snapshotPath(baseUrl, row.id) },
  };
}

/** The content's settings as FlowFuse shows them: variables by name (hidden ones blank). */
export function contentSettingsView(row: Pick<SnapshotRow, "settings">) {
  const { settings, env, modules } = row.settings;
  return {
    settings,
    env: Object.fromEntries(env.map((v) => [v.name, v.hidden ? "" : v.value])),
    hiddenEnv: env.filter((v) => v.hidden).map((v) => v.name),
    modules,
  };
}

export function fullSnapshotView(
  summary: SnapshotSummaryRow,
  row: SnapshotRow,
  baseUrl: string,
): FullSnapshot {
  const view = snapshotView(summary, baseUrl);
  return {
    id: view.id,
    name: view.name,
    description: view.description,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
    ownerType: view.ownerType,
    user: view.user,
    settings: contentSettingsView(row),
    flows: { flows: row.flows as Record<string, unknown>[] },
  };
}
