// Passwords: scrypt (memory-hard, in Node's own crypto; no 72-byte truncation as bcrypt), a salt
// per password, parameters stored with the hash so they can be raised later. CPU only, no I/O.
import {
  randomBytes,
  scrypt as scryptCallback,
  type ScryptOptions,
  timingSafeEqual,
} from "node:crypto";

// N = 2^15, r = 8: 32 MiB and some 50–100 ms per hash on one core.
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(
      password.normalize("NFC"),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 256 * options.N! * options.r! },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, COST);
  return [
    "scrypt",
    Math.log2(COST.N),
    COST.r,
    COST.p,
    salt.toString("base64url"),
    key.toString("base64url"),
  ].join("$");
}

// Checked when there is no hash to check against, so that an unknown user costs the same time.
let decoy: Promise<string> | undefined;

/** Whether the password matches the stored hash. No hash (unknown user): false, in the same time. */
export async function verifyPassword(
  password: string,
  stored: string | null | undefined,
): Promise<boolean> {
  const hash = stored ?? (await (decoy ??= hashPassword(randomBytes(16).toString("hex"))));
  const parts = hash.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [, logN, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, "base64url");
  const actual = await scrypt(password, Buffer.from(salt, "base64url"), {
    N: 2 ** Number(logN),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected) && stored !== null && stored !== undefined;
}

/**
 * Why a password is too weak for this user, or undefined when it will do: a minimum length, and
 * not the user's own username, name or email (nor their local part), in any case.
 */
export function passwordProblem(
  password: string,
  user: { username?: string | null; name?: string | null; email?: string | null },
): string | undefined {
  if ([...password].length < PASSWORD_MIN_LENGTH) {
    return `Must be at least ${PASSWORD_MIN_LENGTH} characters`;
  }
  if (password.length > PASSWORD_MAX_LENGTH) {
    return `Must be at most ${PASSWORD_MAX_LENGTH} characters`;
  }
  const lower = password.toLowerCase();
  const own = [user.username, user.name, user.email, user.email?.split("@")[0]]
    .filter((value): value is string => !!value && value.length >= 3)
    .map((value) => value.toLowerCase());
  if (own.some((value) => lower.includes(value) || value.includes(lower))) {
    return "Must not contain your username, name or email";
  }
  return undefined;
}
