// The settings a device runs with: its variables (a device group's first, the device's own over
// them), and the hash its check-in compares, stored with the device so that a check-in reads it
// without computing anything: whatever changes the variables a device is given refreshes it.
import {
  type Db,
  type DeviceDetail,
  type EnvVar,
  findDevice,
  setSettingsHash,
} from "@flowplane/db";
import { createHash } from "node:crypto";

/** The variables the device is given, in order: its group's, then its own over them. */
export function deviceEnv(device: Pick<DeviceDetail, "settings" | "group_settings">): EnvVar[] {
  const own = device.settings.env ?? [];
  const names = new Set(own.map((v) => v.name));
  const group = (device.group_settings?.env ?? []).filter((v) => !names.has(v.name));
  return [...group, ...own];
}

/** The hash of the variables a device is given (names and values, in order). */
export function settingsHash(env: readonly { name: string; value: string }[]): string {
  const pairs = env.map((variable) => [variable.name, variable.value]);
  return createHash("sha256").update(JSON.stringify(pairs)).digest("hex");
}

/** Stores the hash of what these devices are given now (after a change to their variables). */
export async function refreshSettingsHashes(db: Db, deviceIds: readonly string[]) {
  for (const id of deviceIds) {
    const device = await findDevice(db, id);
    if (device) await setSettingsHash(db, id, settingsHash(deviceEnv(device)));
  }
}
