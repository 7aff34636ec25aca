// The platform's own MQTT identity on an external broker (EMQX): the devices' channel connects as
// `platform:<id>`, with a password derived from the token secret (an HMAC of the username), so
// nothing new is stored and every platform process sharing the secret can prove itself. Its
// callbacks (callbacks.ts) accept it with no mount and let it use exactly what the channel needs.
import { tokenDigest, topicMatches } from "@flowplane/auth";
import { randomBytes, timingSafeEqual } from "node:crypto";

const PLATFORM_USERNAME = /^platform:[A-Za-z0-9]{1,32}$/;

/** What the channel subscribes to: the devices' messages, and EMQX's session events. */
export const PLATFORM_SUBSCRIPTIONS = [
  "ff/v1/+/d/+/status",
  "ff/v1/+/d/+/logs",
  "ff/v1/+/d/+/response",
  "ff/v1/+/d/+/response/+",
  "$SYS/brokers/+/clients/+/connected",
  "$SYS/brokers/+/clients/+/disconnected",
];

/** What it publishes: commands to devices. */
const PLATFORM_PUBLISHES = "ff/v1/+/d/+/command";

const passwordOf = (secret: string, username: string) =>
  tokenDigest(secret, `flowplane-platform-broker\u0000${username}`);

/** A new identity for this process: a username of its own, and its password. */
export function platformCredentials(secret: string): { username: string; password: string } {
  const username = `platform:${randomBytes(9).toString("hex")}`;
  return { username, password: passwordOf(secret, username) };
}

export const isPlatformUsername = (username: string | undefined): username is string =>
  username !== undefined && PLATFORM_USERNAME.test(username);

/** Whether a CONNECT is the platform's own: its username and client id, and their password. */
export function isPlatformLogin(
  secret: string,
  username: string | undefined,
  clientId: string,
  password: string | undefined,
): boolean {
  if (!isPlatformUsername(username) || clientId !== username || password === undefined) {
    return false;
  }
  const expected = Buffer.from(passwordOf(secret, username));
  const given = Buffer.from(password);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Whether the platform's identity may publish to, or subscribe with, `topic`. */
export function platformMayUse(action: "publish" | "subscribe", topic: string): boolean {
  if (action === "publish") return topicMatches(PLATFORM_PUBLISHES, topic);
  return PLATFORM_SUBSCRIPTIONS.includes(topic);
}
