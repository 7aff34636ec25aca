// What the database keeps of a token: an HMAC-SHA-256 digest keyed by the server secret, so a
// leaked table cannot be used to check guesses without the secret.
import { createHmac } from "node:crypto";

export function tokenDigest(secret: string, token: string): string {
  return createHmac("sha256", secret).update(token).digest("base64url");
}
