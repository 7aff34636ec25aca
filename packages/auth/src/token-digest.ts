// What the database keeps of a token: an HMAC-SHA-256 digest keyed by the server secret, so a
// leaked table cannot be used to check guesses without the secret.
import { createHmac, timingSafeEqual } from "node:crypto";

export function tokenDigest(secret: string, token: string): string {
  return createHmac("sha256", secret).update(token).digest("base64url");
}

/**
 * The credential a device's flows report their health to a rollout with (the rollout's health
 * tab): derived from the server secret, the rollout and the device, so it is never stored, reaches
 * that one device's reports to that one rollout, and nothing else.
 */
export function rolloutHealthToken(secret: string, rolloutId: string, deviceId: string): string {
  return createHmac("sha256", secret)
    .update(`flowplane rollout health\u0000${rolloutId}\u0000${deviceId}`)
    .digest("base64url");
}

/** Whether `token` is the rollout health credential of that rollout and device. */
export function isRolloutHealthToken(
  secret: string,
  rolloutId: string,
  deviceId: string,
  token: string,
): boolean {
  const expected = Buffer.from(rolloutHealthToken(secret, rolloutId, deviceId));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
