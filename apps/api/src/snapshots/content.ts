// What a snapshot holds and where it comes from and goes: taken from an instance (its flows as
// deployed, its credentials decrypted with the instance's own secret, its variables and modules),
// its secrets sealed under the snapshot's own key, opened again for a deploy or an export, and
// written back onto an instance (its credentials encrypted with that instance's secret).
import {
  decryptCredentials,
  encryptCredentials,
  type EncryptedCredentials,
  isEncryptedCredentials,
  openSnapshotEnv,
  openSnapshotSecrets,
  type SnapshotSecrets,
} from "@flowplane/auth";
import {
  type Db,
  type EnvVar,
  type ProjectDetail,
  type SnapshotRow,
  type SnapshotSettings,
} from "@flowplane/db";
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { ApiError, unreadableSnapshot } from "../core/errors";
import type { Context } from "../core/trpc";

/** A snapshot's whole content, secrets in the clear (in memory only). */
export interface SnapshotContent {
  flows: unknown[];
  settings: SnapshotSettings;
  secrets: SnapshotSecrets;
}

/** Node-RED keeps the secret it encrypts credentials with in its runtime settings. */
const NODE_RED_SECRET = "_credentialSecret";

export const badCredentialSecret = (field = "credentialSecret") =>
  new ApiError(400, "bad_request", "Invalid credential secret", [
    { path: field, message: "Does not decrypt the credentials" },
  ]);

/** Credentials as given: encrypted with `secret`, or plain. */
export function openCredentials(
  given: unknown,
  secret: string | undefined,
  field = "credentialSecret",
): Record<string, unknown> {
  if (given === undefined || given === null) return {};
  if (!isEncryptedCredentials(given)) return given as Record<string, unknown>;
  if (secret === undefined) {
    throw new ApiError(400, "bad_request", "Encrypted credentials need their credentialSecret", [
      { path: field, message: "Required with encrypted credentials" },
    ]);
  }
  const value = decryptCredentials(secret, given);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badCredentialSecret(field);
  }
  return value as Record<string, unknown>;
}

/** The modules of an instance: its stack's Node-RED and what its palette installed. */
export function instanceModules(project: ProjectDetail): Record<string, string> {
  const nodeRed = project.stack_properties.nodered;
  return {
    ...(typeof nodeRed === "string" && { "node-red": nodeRed }),
    ...project.settings.palette?.modules,
  };
}

/** What the instance runs now, as a snapshot would keep it. */
export async function contentOfInstance(db: Db, project: ProjectDetail): Promise<SnapshotContent> {
  const storage = await db
    .selectFrom("project_storage")
    .select(["flows", "credentials", "settings"])
    .where("project_id", "=", project.id)
    .executeTakeFirst();
  const runtimeSettings = (storage?.settings ?? {}) as Record<string, unknown>;
  const secret = runtimeSettings[NODE_RED_SECRET];
  let credentials: Record<string, unknown> = {};
  const stored = storage?.credentials;
  if (isEncryptedCredentials(stored)) {
    const value = typeof secret === "string" ? decryptCredentials(secret, stored) : undefined;
    if (typeof value !== "object" || value === null) {
      throw new ApiError(
        500,
        "unexpected_error",
        "The instance's credentials cannot be read with its own secret",
      );
    }
    credentials = value as Record<string, unknown>;
  } else if (stored && typeof stored === "object") {
    credentials = stored as Record<string, unknown>;
  }
  const env = project.settings.env ?? [];
  const { env: _env, palette: _palette, ...rest } = project.settings;
  return {
    flows: Array.isArray(storage?.flows) ? storage.flows : [],
    settings: {
      settings: rest,
      env: env.map((v) => ({ name: v.name, value: v.hidden ? "" : v.value, hidden: v.hidden })),
      modules: instanceModules(project),
    },
    secrets: {
      credentials,
      env: Object.fromEntries(env.filter((v) => v.hidden).map((v) => [v.name, v.value])),
    },
  };
}

/** A snapshot's secrets opened (500 when the platform's secret no longer opens them). */
export function openSecrets(platformSecret: string, row: SnapshotRow): SnapshotSecrets {
  const secrets = openSnapshotSecrets(platformSecret, row);
  if (!secrets) throw unreadableSnapshot();
  return secrets;
}

/** Encrypted with a secret: Node-RED's form. */
export function encryptWith(secret: string, value: unknown): EncryptedCredentials {
  return encryptCredentials(secret, value);
}

/** The instance's content before a deploy: what puts it back if the deploy fails. */
export interface InstanceState {
  flows: unknown;
  credentials: unknown;
  runtimeSettings: unknown;
  settings: ProjectDetail["settings"];
}

export async function findInstanceState(db: Db, projectId: string): Promise<InstanceState> {
  const row = await db
    .selectFrom("project_storage as ps")
    .innerJoin("projects as p", "p.id", "ps.project_id")
    .select(["ps.flows", "ps.credentials", "ps.settings as runtime_settings", "p.settings"])
    .where("ps.project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return {
    flows: row.flows,
    credentials: row.credentials,
    runtimeSettings: row.runtime_settings,
    settings: row.settings,
  };
}

/**
 * Writes new content onto an instance with its audit entries (`record`). A running instance
 * restarts on it, and gets back what it had (its entries unwritten) if it does not start; without
 * a runtime, the content changes and Node-RED runs it when it next starts. `next` makes the new
 * state from the old, in the write's transaction.
 */
export async function writeOntoInstance(
  ctx: Pick<Context, "db" | "instances">,
  projectId: string,
  next: (before: InstanceState, trx: Db) => InstanceState | Promise<InstanceState>,
  record: (trx: Db) => Promise<void>,
): Promise<void> {
  const write = async () =>
    ctx.db.transaction().execute(async (trx) => {
      const before = await findInstanceState(trx, projectId);
      await writeInstanceState(trx, projectId, await next(before, trx));
      return () =>
        ctx.db.transaction().execute((undo) => writeInstanceState(undo, projectId, before));
    });
  if (ctx.instances) {
    await ctx.instances.replace(projectId, write, record);
  } else {
    await write();
    await ctx.db.transaction().execute(record);
  }
}

/** Writes an instance's state; the caller gives the transaction it belongs to. */
export async function writeInstanceState(
  trx: Db,
  projectId: string,
  state: InstanceState,
): Promise<void> {
  await trx
    .updateTable("project_storage")
    .set({
      flows: JSON.stringify(state.flows),
      credentials: JSON.stringify(state.credentials),
      settings: JSON.stringify(state.runtimeSettings),
      flows_updated_at: sql`now()`,
    })
    .where("project_id", "=", projectId)
    .execute();
  await trx
    .updateTable("projects")
    .set({ settings: JSON.stringify(state.settings), updated_at: sql`now()` })
    .where("id", "=", projectId)
    .execute();
}

/** Node-RED's runtime settings with the secret its credentials are encrypted with (made if none). */
export function withCredentialSecret(runtimeSettings: unknown): Record<string, unknown> {
  const settings = { ...(runtimeSettings as Record<string, unknown>) };
  const secret = settings[NODE_RED_SECRET];
  if (typeof secret !== "string" || secret === "") {
    settings[NODE_RED_SECRET] = randomBytes(32).toString("hex");
  }
  return settings;
}

/** The secret of runtime settings that `withCredentialSecret` gave one. */
export const credentialSecretOf = (runtimeSettings: Record<string, unknown>): string =>
  runtimeSettings[NODE_RED_SECRET] as string;

/**
 * The instance's state once a snapshot is deployed on it: the snapshot's flows, its credentials
 * encrypted with the instance's own Node-RED secret (one is made if it has none yet), its
 * variables and its modules. The instance's other settings stay.
 */
export function deployedState(before: InstanceState, content: SnapshotContent): InstanceState {
  const runtimeSettings = withCredentialSecret(before.runtimeSettings);
  const { "node-red": _nodeRed, ...modules } = content.settings.modules;
  return {
    flows: content.flows,
    credentials:
      Object.keys(content.secrets.credentials).length === 0
        ? {}
        : encryptCredentials(credentialSecretOf(runtimeSettings), content.secrets.credentials),
    runtimeSettings,
    settings: {
      ...before.settings,
      env: openSnapshotEnv(content.settings.env, content.secrets),
      palette: { ...before.settings.palette, modules },
    },
  };
}

/** A snapshot's content with its secrets opened (for a deploy or an export). */
export function contentOf(platformSecret: string, row: SnapshotRow): SnapshotContent {
  return { flows: row.flows, settings: row.settings, secrets: openSecrets(platformSecret, row) };
}

/** Variables given with content: FlowFuse's `{ NAME: value }`, or Flowplane's array. */
export function givenEnv(
  env: Record<string, string> | { name: string; value: string; hidden?: boolean }[],
  hiddenNames: readonly string[] = [],
): EnvVar[] {
  const list = Array.isArray(env)
    ? env
    : Object.entries(env).map(([name, value]) => ({ name, value, hidden: undefined }));
  return list
    .filter((v) => !v.name.startsWith("FF_"))
    .map((v) => ({
      name: v.name,
      value: v.value,
      hidden: v.hidden ?? hiddenNames.includes(v.name),
    }));
}
