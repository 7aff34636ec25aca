// The settings a device runs with: its variables (a device group's first, the device's own over
// them), and the hash its check-in compares, stored with the device so that a check-in reads it
// without computing anything.
import type { DeviceDetail, EnvVar } from "@flowplane/db";
import { createHash } from "node:crypto";

/** The variables the device is given, in order. */
export function deviceEnv(device: Pick<DeviceDetail, "settings">): EnvVar[] {
  return device.settings.env ?? [];
}

/** The hash of the variables a device is given (names and values, in order). */
export function settingsHash(env: readonly { name: string; value: string }[]): string {
  const pairs = env.map((variable) => [variable.name, variable.value]);
  return createHash("sha256").update(JSON.stringify(pairs)).digest("hex");
}
