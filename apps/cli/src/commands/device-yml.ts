// The device agent's device.yml, as `devices create`, `devices generate-credentials` and
// `devices provisioning create` print it or write it (private-file.ts): what the agent starts
// from, and the platform's URL as `forgeURL`.

/** The lines of device.yml: `entries`, then `forgeURL` (every value quoted as YAML strings). */
export function deviceYml(entries: Record<string, string>, url: string): string {
  return Object.entries({ ...entries, forgeURL: url.replace(/\/+$/, "") })
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}\n`)
    .join("");
}
