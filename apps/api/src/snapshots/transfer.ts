// Snapshots leaving and entering the platform: an export carries the credentials and hidden
// variables encrypted with a secret the caller gives (Node-RED's format, so FlowFuse's tools and
// Node-RED read it); an import opens them with that secret and seals them under the new
// snapshot's own key.
import type { ExportedSnapshot, UserSummary } from "@flowplane/contract";
import type { EnvVar, SnapshotRow, SnapshotSummaryRow } from "@flowplane/db";
import { contentOf, encryptWith, givenEnv, openCredentials, type SnapshotContent } from "./content";
import { fullSnapshotView } from "./views";

export interface Components {
  flows?: boolean;
  credentials?: boolean;
  envVars?: "all" | "keys" | false;
}

export function exportSnapshot(
  platformSecret: string,
  summary: SnapshotSummaryRow,
  row: SnapshotRow,
  baseUrl: string,
  options: { credentialSecret: string; components?: Components; exportedBy: UserSummary },
): ExportedSnapshot {
  const content = contentOf(platformSecret, row);
  const components = options.components ?? {};
  const full = fullSnapshotView(summary, row, baseUrl);
  const envVars = components.envVars ?? "all";
  const env = envVars === false ? [] : content.settings.env;
  const hidden = env.filter((v) => v.hidden);
  const withCredentials =
    components.credentials !== false && Object.keys(content.secrets.credentials).length > 0;
  const hiddenValues = Object.fromEntries(
    hidden.map((v) => [v.name, content.secrets.env[v.name] ?? ""]),
  );
  return {
    ...full,
    flows: {
      flows: components.flows === false ? [] : full.flows.flows,
      ...(withCredentials && {
        credentials: encryptWith(options.credentialSecret, content.secrets.credentials),
      }),
    },
    settings: {
      ...full.settings,
      env: Object.fromEntries(
        env.map((v) => [v.name, envVars === "keys" || v.hidden ? "" : v.value]),
      ),
      hiddenEnv: hidden.map((v) => v.name),
      ...(envVars === "all" &&
        hidden.length > 0 && { secretEnv: encryptWith(options.credentialSecret, hiddenValues) }),
    },
    exportedBy: options.exportedBy,
  };
}

export interface ImportedSnapshot {
  flows: { flows: Record<string, unknown>[]; credentials?: unknown };
  settings: {
    settings?: Record<string, unknown>;
    env?: Record<string, string> | { name: string; value: string; hidden?: boolean }[];
    hiddenEnv?: string[];
    secretEnv?: { $: string };
    modules?: Record<string, string>;
  };
}

/** The content of an exported snapshot, opened with the secret it was exported with. */
export function importedContent(
  given: ImportedSnapshot,
  credentialSecret: string | undefined,
  components: Components = {},
): SnapshotContent {
  const credentials =
    components.credentials === false
      ? {}
      : openCredentials(given.flows.credentials, credentialSecret);
  const envVars = components.envVars ?? "all";
  const env: EnvVar[] =
    envVars === false ? [] : givenEnv(given.settings.env ?? {}, given.settings.hiddenEnv ?? []);
  let hiddenValues: Record<string, unknown> = {};
  if (envVars === "all" && given.settings.secretEnv) {
    hiddenValues = openCredentials(given.settings.secretEnv, credentialSecret);
  }
  for (const v of env) {
    if (v.hidden && v.value === "" && typeof hiddenValues[v.name] === "string") {
      v.value = hiddenValues[v.name] as string;
    }
    if (envVars === "keys") v.value = "";
  }
  const modules = given.settings.modules ?? {};
  return {
    flows: components.flows === false ? [] : given.flows.flows,
    settings: {
      settings: given.settings.settings ?? {},
      env: env.map((v) => ({ ...v, value: v.hidden ? "" : v.value })),
      modules,
    },
    secrets: {
      credentials,
      env: Object.fromEntries(env.filter((v) => v.hidden).map((v) => [v.name, v.value])),
    },
  };
}
