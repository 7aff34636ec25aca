// A device's credentials: its token and credential secret, the one-time code that comes with them,
// and the device agent's one-time-code setup (`flowfuse-device-agent --otc <code> --ff-url <url>`),
// which trades the code for new credentials.
import {
  deviceBrokerUsername,
  generateOneTimeCode,
  generateToken,
  randomBase62,
  tokenDigest,
} from "@flowplane/auth";
import { DEVICE_OTC_LIFETIME_MS } from "@flowplane/contract";
import { type Db, type DeviceOtc, setUpDeviceWithOtc } from "@flowplane/db";
import { randomBytes } from "node:crypto";
import { invalidRequest, unauthorized } from "../core/errors";
import type { Context } from "../core/trpc";
import { recordCredentialsGenerated } from "./events";

/**
 * New credentials: the token and its digest, the secret Node-RED decrypts with, and the password
 * the agent connects to the platform's broker with (and its digest).
 */
export function newCredentials(secret: string) {
  const token = generateToken("device");
  const brokerPassword = randomBase62(32);
  return {
    token,
    tokenDigest: tokenDigest(secret, token),
    credentialSecret: randomBytes(32).toString("hex"),
    brokerPassword,
    brokerPasswordDigest: tokenDigest(secret, brokerPassword),
  };
}

export type NewCredentials = ReturnType<typeof newCredentials>;

/**
 * The credentials a reply shows once: with the broker's `url`, `username` and `password` whenever
 * the platform has a broker (the agent then talks MQTT and stops polling), as FlowFuse's.
 */
export function shownCredentials(
  ctx: Pick<Context, "brokerEndpoint">,
  device: { id: string; team_id: string },
  credentials: NewCredentials,
) {
  return {
    token: credentials.token,
    credentialSecret: credentials.credentialSecret,
    ...(ctx.brokerEndpoint && {
      broker: {
        url: ctx.brokerEndpoint.url,
        username: deviceBrokerUsername(device.team_id, device.id),
        password: credentials.brokerPassword,
      },
    }),
  };
}

/** A new one-time code: the code (shown once) and what is kept of it. */
export function newOtc(secret: string, now = Date.now()): { code: string; kept: DeviceOtc } {
  const code = generateOneTimeCode();
  return {
    code,
    kept: { digest: tokenDigest(secret, code), expiresAt: new Date(now + DEVICE_OTC_LIFETIME_MS) },
  };
}

/**
 * The setup: the caller's one-time code is used up and its device gets new credentials (its old
 * token stops working), in one statement, so of two uses of a code only one succeeds. An unknown,
 * used or expired code: 401, which the agent reports as "invalid or already used". Audited as new
 * credentials (as FlowFuse does), by the platform, with the host the agent named.
 */
export async function setUpDevice(
  ctx: Pick<Context, "db" | "auth" | "tokenSecret" | "brokerEndpoint" | "broker">,
  agentHost: string | undefined,
): Promise<{ deviceId: string; credentials: ReturnType<typeof shownCredentials> }> {
  const otc = ctx.auth.otc;
  if (!otc) {
    throw invalidRequest("Invalid request: setup: only with a device's one-time code", [
      { path: "setup", message: "A setup's bearer is the base64 of the device's one-time code" },
    ]);
  }
  const credentials = newCredentials(ctx.tokenSecret);
  const device = await ctx.db.transaction().execute(async (trx: Db) => {
    const device = await setUpDeviceWithOtc(trx, otc.digest, credentials);
    if (!device) throw unauthorized();
    await recordCredentialsGenerated(trx, "system", device, {
      setup: { oneTimeCode: true, ...(agentHost !== undefined && { agentHost }) },
    });
    return device;
  });
  // The old credentials' MQTT session, if any, ends now.
  ctx.broker?.deviceChanged(device.team_id, device.id);
  return { deviceId: device.id, credentials: shownCredentials(ctx, device, credentials) };
}
