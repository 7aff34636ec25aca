// A team's provisioning token (`fpv_…`, bearer; no user): it may create devices in its team,
// nothing else, and is accepted only where the caller accepts one (POST /api/v1/devices).
import { bearerToken, parseToken, tokenDigest } from "@flowplane/auth";
import { findProvisioningTokenByDigest } from "@flowplane/db";
import type { CredentialStore, Identity } from "./identity";

/**
 * A provisioning token (`fpv_…`), only where the caller accepts one (POST /api/v1/devices). An
 * expired one is refused (and kept: its owners see it expired in their list).
 */
export async function authenticateProvisioning(
  store: CredentialStore,
  header: string | undefined,
): Promise<Identity | undefined> {
  const token = bearerToken(header);
  if (!token || parseToken(token) !== "provisioning") return undefined;
  const digest = tokenDigest(store.secret, token);
  if (store.unknown.has(digest)) return undefined;
  const row = await findProvisioningTokenByDigest(store.db, digest);
  if (!row) {
    store.unknown.set(digest, true);
    return undefined;
  }
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) return undefined;
  return {
    kind: "provisioning",
    id: row.id,
    tokenId: null,
    userId: "",
    username: `provisioning:${row.name}`,
    admin: false,
    scope: {
      readOnly: false,
      adminOptIn: false,
      teamIds: [row.team_id],
      expiresAt: row.expires_at,
    },
    passwordExpired: false,
    provisioning: {
      tokenId: row.id,
      name: row.name,
      teamId: row.team_id,
      applicationId: row.application_id,
      projectId: row.project_id,
    },
  };
}
