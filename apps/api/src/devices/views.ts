// How devices look on the wire (FlowFuse's Device shape), and the settings hash a device's
// check-in compares.
import {
  type Device,
  DEVICE_ONLINE_MS,
  type DeviceSummary,
  type EnvVar,
  PLATFORM_ENV_PREFIX,
} from "@flowplane/contract";
import type { DeviceDetail, EnvVar as StoredEnvVar } from "@flowplane/db";
import { teamSummary } from "../teams/index";

export const devicePath = (baseUrl: string, id: string) => `${baseUrl}/api/v1/devices/${id}`;

/**
 * `online` while the device holds its MQTT session with the platform, `offline` once it has lost
 * it; a device that never had one (it polls over HTTP): `online` when it checked in within 30
 * minutes (FlowFuse's), `offline` after that, `not-seen` before its first check-in.
 */
export function onlineStatus(
  lastSeenAt: Date | null,
  now = Date.now(),
  mqttConnected: boolean | null = null,
) {
  if (!lastSeenAt) return "not-seen" as const;
  if (mqttConnected !== null) return mqttConnected ? ("online" as const) : ("offline" as const);
  return now - lastSeenAt.getTime() <= DEVICE_ONLINE_MS
    ? ("online" as const)
    : ("offline" as const);
}

/** A device as lists show it (FlowFuse's `deviceSummary`). */
export function deviceSummary(
  device: DeviceDetail,
  baseUrl: string,
  now = Date.now(),
): DeviceSummary {
  const ownerType = device.project_id ? "instance" : device.application_id ? "application" : null;
  return {
    id: device.id,
    name: device.name,
    type: device.type,
    ownerType,
    lastSeenAt: device.last_seen_at?.toISOString() ?? null,
    lastSeenMs: device.last_seen_at ? Math.max(0, now - device.last_seen_at.getTime()) : null,
    status: device.state ?? "offline",
    onlineStatus: onlineStatus(device.last_seen_at, now, device.mqtt_connected),
    mode: device.mode === "developer" ? "developer" : "autonomous",
    isDeploying:
      device.target_snapshot_id !== null && device.target_snapshot_id !== device.active_snapshot_id,
    links: { self: devicePath(baseUrl, device.id) },
  };
}

export function deviceView(device: DeviceDetail, baseUrl: string, now = Date.now()): Device {
  return {
    ...deviceSummary(device, baseUrl, now),
    createdAt: device.created_at.toISOString(),
    updatedAt: device.updated_at.toISOString(),
    agentVersion: device.agent_version,
    nodeRedVersion: device.node_red_version,
    nodejsVersion: device.nodejs_version,
    activeSnapshot:
      device.active_snapshot_id !== null && device.active_created_at !== null
        ? {
            id: device.active_snapshot_id,
            name: device.active_name!,
            description: device.active_description!,
            createdAt: device.active_created_at.toISOString(),
          }
        : null,
    targetSnapshot:
      device.target_id !== null && device.target_created_at !== null
        ? {
            id: device.target_id,
            name: device.target_name!,
            description: device.target_description!,
            createdAt: device.target_created_at.toISOString(),
          }
        : null,
    team: teamSummary(
      { id: device.team_id, name: device.team_name, slug: device.team_slug },
      baseUrl,
    ),
    application:
      device.application_id && device.application_name !== null
        ? {
            id: device.application_id,
            name: device.application_name,
            description: device.application_description,
            links: { self: `${baseUrl}/api/v1/applications/${device.application_id}` },
          }
        : null,
    instance:
      device.project_id && device.project_name !== null
        ? {
            id: device.project_id,
            name: device.project_name,
            links: { self: `${baseUrl}/api/v1/projects/${device.project_id}` },
          }
        : null,
    deviceGroup:
      device.group_id !== null && device.group_name !== null
        ? { id: device.group_id, name: device.group_name, description: device.group_description! }
        : null,
  };
}

/** The device's own variables with hidden values blank. */
export function visibleDeviceEnv(env: StoredEnvVar[] | undefined): Required<EnvVar>[] {
  return (env ?? []).map((variable) => ({
    name: variable.name,
    value: variable.hidden ? "" : variable.value,
    hidden: variable.hidden ?? false,
  }));
}

/**
 * The variables to store: the platform's `FF_*` dropped, and a hidden variable sent with an empty
 * value keeping the value it had.
 */
export function envToStore(sent: EnvVar[], before: StoredEnvVar[]): StoredEnvVar[] {
  return sent
    .filter((variable) => !variable.name.startsWith(PLATFORM_ENV_PREFIX))
    .map((variable) => {
      const hidden = variable.hidden ?? false;
      const old = before.find((other) => other.name === variable.name);
      const value = hidden && variable.value === "" && old ? old.value : variable.value;
      return { name: variable.name, value, hidden };
    });
}

/** The application a device runs snapshots of: its own, or its instance's. */
export const applicationOfDevice = (device: DeviceDetail) =>
  device.application_id ?? device.project_application_id;
