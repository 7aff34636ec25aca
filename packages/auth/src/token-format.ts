// Token values: `<prefix>_` + 30 random base62 characters + a 6-character base62 CRC32 checksum of
// everything before it (GitHub's design). The checksum lets us refuse a mistyped or made-up token
// without touching the database, and lets secret scanners recognise our tokens.
import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

/** Each kind of token has its own prefix. */
export const TOKEN_PREFIX = {
  personalAccessToken: "fpp",
  /** The value of a signed-in browser's session cookie. */
  session: "fps",
  /** A person's session in one instance's editor: reaches that editor only, never the API. */
  editorSession: "fpe",
  /** A one-time code the platform's sign-in page hands an editor, exchanged for an editor session. */
  editorCode: "fpc",
  /** A hosted instance's own token: reaches only that instance's storage and editor routes. */
  instance: "fpi",
  /** An external MQTT broker's token: reaches only the broker callbacks under /api/comms/. */
  broker: "fpb",
  /** A remote device's token: reaches only that device's live routes (/api/v1/devices/<id>/live/…). */
  device: "fpd",
  /** A team's provisioning token: creates devices in its team (POST /api/v1/devices) and no more. */
  provisioning: "fpv",
  /**
   * A device's registration from its own terminal: the page a signed-in person opens to complete
   * it (/register/remote-instance/<token>). Reaches that page and its status only.
   */
  deviceRegistration: "fpr",
  /** The same registration's poll token: the agent reads the finished registration with it, once. */
  deviceRegistrationPoll: "fpw",
} as const;
export type TokenKind = keyof typeof TOKEN_PREFIX;

const KIND_BY_PREFIX = new Map<string, TokenKind>(
  Object.entries(TOKEN_PREFIX).map(([kind, prefix]) => [prefix, kind as TokenKind]),
);

// Random bytes are drawn from a pooled buffer refilled from the OS's cryptographic source (as
// Node does for randomUUID): one system call per 4 KiB instead of one per id.
const POOL_SIZE = 4096;
let pool: Buffer = Buffer.alloc(0);
let poolOffset = 0;

function randomByte(): number {
  if (poolOffset === pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Random base62 text from the OS's cryptographic source. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function checksum(text: string): string {
  let value = crc32(text);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateToken(kind: TokenKind): string {
  const head = `${TOKEN_PREFIX[kind]}_${randomBase62(BODY_LENGTH)}`;
  return head + checksum(head);
}

const SHAPE = new RegExp(`^([a-z]{2,8})_[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** The token's kind when its shape and checksum are right, else undefined. No I/O. */
export function parseToken(value: string): TokenKind | undefined {
  const match = SHAPE.exec(value);
  if (!match) return undefined;
  const kind = KIND_BY_PREFIX.get(match[1]!);
  if (!kind) return undefined;
  const cut = value.length - CHECKSUM_LENGTH;
  return checksum(value.slice(0, cut)) === value.slice(cut) ? kind : undefined;
}

/** The token in an `Authorization: Bearer <token>` header, when the header has that form. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || !header.startsWith("Bearer ")) return undefined;
  const token = header.slice(7);
  return token.length > 0 && !token.includes(" ") ? token : undefined;
}
