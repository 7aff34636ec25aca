// A device's one-time code (bearer; no user): it may set up its device (POST /api/v1/devices with
// `setup: true`), once, nothing else. No database here: the setup decides whether it is live.
import { oneTimeCodeFromBearer, tokenDigest } from "@flowplane/auth";
import type { Identity } from "./identity";

/**
 * A device's one-time code as the agent sends it (the base64 of the code), only where the
 * caller accepts one (POST /api/v1/devices). Only its shape is checked here: the setup uses it
 * up in the same statement that finds it, so that two uses cannot both succeed.
 */
export function authenticateOtc(secret: string, header: string | undefined): Identity | undefined {
  const code = oneTimeCodeFromBearer(header);
  if (code === undefined) return undefined;
  const digest = tokenDigest(secret, code);
  return {
    kind: "otc",
    id: digest,
    tokenId: null,
    userId: "",
    username: "device-setup",
    admin: false,
    scope: { readOnly: false, adminOptIn: false, teamIds: [], expiresAt: null },
    passwordExpired: false,
    otc: { digest },
  };
}
