// Node-RED's credential encryption (its `credentials` object as it stores it: `{ "$": iv + data }`,
// AES-256-CTR under the SHA-256 of a secret), so that what the platform hands an instance, a
// device or an export is what Node-RED and FlowFuse's tools read. And a snapshot's own secrets,
// sealed and opened under a key derived from the platform's secret: the database alone decrypts
// nothing.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";

/** Node-RED's encrypted form. */
export interface EncryptedCredentials {
  $: string;
}

export function isEncryptedCredentials(value: unknown): value is EncryptedCredentials {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { $?: unknown }).$ === "string" &&
    Object.keys(value).length === 1
  );
}

export function encryptCredentials(secret: string, value: unknown): EncryptedCredentials {
  const key = createHash("sha256").update(secret).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-ctr", key, iv);
  const data = cipher.update(JSON.stringify(value), "utf8", "base64") + cipher.final("base64");
  return { $: iv.toString("hex") + data };
}

/** The value, or undefined when the secret is not the one it was encrypted with. */
export function decryptCredentials(secret: string, encrypted: EncryptedCredentials): unknown {
  const text = encrypted.$;
  if (!/^[0-9a-f]{32}/i.test(text)) return undefined;
  const key = createHash("sha256").update(secret).digest();
  const decipher = createDecipheriv("aes-256-ctr", key, Buffer.from(text.slice(0, 32), "hex"));
  const plain = decipher.update(text.slice(32), "base64", "utf8") + decipher.final("utf8");
  try {
    // CTR has no integrity check: a wrong key gives garbage, which does not parse.
    return JSON.parse(plain) as unknown;
  } catch {
    return undefined;
  }
}

/** The secret a snapshot's credentials are encrypted with: the platform's, per snapshot. */
export function snapshotSecret(platformSecret: string, snapshotId: string): string {
  return createHmac("sha256", platformSecret)
    .update(`flowplane snapshot secrets ${snapshotId}`)
    .digest("hex");
}

/** The secret part of a snapshot: the flows' credentials by node id, hidden variables' values. */
export interface SnapshotSecrets {
  credentials: Record<string, unknown>;
  env: Record<string, string>;
}

/** A snapshot's secrets sealed under its own key (null when it has none). */
export function sealSnapshotSecrets(
  platformSecret: string,
  snapshotId: string,
  secrets: SnapshotSecrets,
): string | null {
  if (Object.keys(secrets.credentials).length === 0 && Object.keys(secrets.env).length === 0) {
    return null;
  }
  return encryptCredentials(snapshotSecret(platformSecret, snapshotId), secrets).$;
}

/**
 * A snapshot's secrets opened again; undefined when they do not open with the platform's secret
 * (it changed since the snapshot was taken).
 */
export function openSnapshotSecrets(
  platformSecret: string,
  snapshot: { id: string; secrets: string | null },
): SnapshotSecrets | undefined {
  if (snapshot.secrets === null) return { credentials: {}, env: {} };
  const value = decryptCredentials(snapshotSecret(platformSecret, snapshot.id), {
    $: snapshot.secrets,
  }) as Partial<SnapshotSecrets> | undefined;
  if (!value || typeof value !== "object") return undefined;
  return { credentials: value.credentials ?? {}, env: value.env ?? {} };
}

/** A snapshot's variables as they are given: hidden ones with their values back. */
export function openSnapshotEnv(
  env: readonly { name: string; value: string; hidden: boolean }[],
  secrets: SnapshotSecrets,
): { name: string; value: string; hidden: boolean }[] {
  return env.map((v) => ({
    name: v.name,
    value: v.hidden ? (secrets.env[v.name] ?? "") : v.value,
    hidden: v.hidden,
  }));
}

/** A webhook's signing secret sealed under a key of its own, derived from the platform's. */
export function sealWebhookSecret(platformSecret: string, hookId: string, secret: string): string {
  return encryptCredentials(webhookKey(platformSecret, hookId), { secret }).$;
}

/** The signing secret again; undefined when the platform's secret changed since it was sealed. */
export function openWebhookSecret(
  platformSecret: string,
  hook: { id: string; secret: string },
): string | undefined {
  const value = decryptCredentials(webhookKey(platformSecret, hook.id), { $: hook.secret }) as
    { secret?: unknown } | undefined;
  return typeof value?.secret === "string" ? value.secret : undefined;
}

function webhookKey(platformSecret: string, hookId: string): string {
  return createHmac("sha256", platformSecret)
    .update(`flowplane webhook secret ${hookId}`)
    .digest("hex");
}
