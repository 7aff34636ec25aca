// First-start work: the token secret, and the platform administrator with one token whose value is
// written to a 0600 file (never logged). A database that already has users is never touched.
import { generateToken, hashPassword, randomBase62, tokenDigest } from "@flowplane/auth";
import {
  countUsers,
  type Db,
  insertToken,
  insertUser,
  lockForTransaction,
  recordAudit,
} from "@flowplane/db";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const INITIAL_TOKEN_FILE = "initial-admin-token";
export const INITIAL_PASSWORD_FILE = "initial-admin-password";
const SECRET_FILE = "token-secret";

/** FLOWPLANE_TOKEN_SECRET, or the secret kept in DATA_DIR (generated on first start). */
export async function loadTokenSecret(dataDir: string, configured?: string): Promise<string> {
  if (configured) return configured;
  const path = join(dataDir, SECRET_FILE);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(path, randomBase62(48), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return (await readFile(path, "utf8")).trim();
}

/**
 * Creates `admin` when the database has no user yet: a token, and a generated password marked
 * expired (the first sign-in chooses a new one), each written to a 0600 file in DATA_DIR. Returns
 * the token file's path when it did. Replicas starting together agree through an advisory lock.
 */
export async function ensureInitialAdmin(
  db: Db,
  secret: string,
  dataDir: string,
): Promise<string | undefined> {
  const path = join(dataDir, INITIAL_TOKEN_FILE);
  const passwordPath = join(dataDir, INITIAL_PASSWORD_FILE);
  const password = randomBase62(20);
  const passwordHash = await hashPassword(password);
  return db
    .transaction()
    .execute(async (trx) => {
      await lockForTransaction(trx, "flowplane.initial-admin");
      if ((await countUsers(trx)) > 0) return undefined;

      const user = await insertUser(trx, {
        username: "admin",
        name: "Administrator",
        admin: true,
        passwordHash,
        passwordExpired: true,
      });
      const value = generateToken("personalAccessToken");
      const token = await insertToken(trx, {
        userId: user.id,
        parentId: null,
        name: "initial-admin-token",
        digest: tokenDigest(secret, value),
        scope: { readOnly: false, adminOptIn: true, teamIds: null, expiresAt: null },
      });
      await recordAudit(trx, {
        event: "users.created-user",
        entity: { type: "user", id: user.id },
        actor: "system",
        body: { user: { id: user.id, username: user.username }, reason: "first start" },
      });
      await recordAudit(trx, {
        event: "user.pat.created",
        entity: { type: "user", id: user.id },
        actor: "system",
        body: { token: { id: token.id, name: token.name, adminOptIn: true } },
      });
      await mkdir(dataDir, { recursive: true });
      // "wx": never overwrite. Written before commit; removed again if the commit fails.
      await writeFile(path, `${value}\n`, { mode: 0o600, flag: "wx" });
      await writeFile(passwordPath, `${password}\n`, { mode: 0o600, flag: "wx" });
      return path;
    })
    .catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        await rm(path, { force: true });
        await rm(passwordPath, { force: true });
      }
      throw error;
    });
}
