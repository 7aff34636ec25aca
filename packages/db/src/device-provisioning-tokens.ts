// A team's provisioning tokens for remote devices (devices.ts): their rows, by team, by id and by
// digest (a device agent provisioning itself with one), their changes and deletion.
import type { Kysely } from "kysely";
import { newId } from "./ids";
import type { Database, ProvisioningTokenRow } from "./schema";
import { findWhere, listWhere } from "./rows";

type Db = Kysely<Database>;

export interface NewProvisioningToken {
  teamId: string;
  name: string;
  digest: string;
  applicationId: string | null;
  projectId: string | null;
  expiresAt: Date | null;
}

export async function insertProvisioningToken(
  db: Db,
  values: NewProvisioningToken,
): Promise<ProvisioningTokenRow> {
  return db
    .insertInto("device_provisioning_tokens")
    .values({
      id: newId(),
      team_id: values.teamId,
      name: values.name,
      digest: values.digest,
      application_id: values.applicationId,
      project_id: values.projectId,
      expires_at: values.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listProvisioningTokens(
  db: Db,
  teamId: string,
): Promise<ProvisioningTokenRow[]> {
  return listWhere(db, "device_provisioning_tokens", { team_id: teamId }, ["created_at"]);
}

export async function findProvisioningToken(
  db: Db,
  teamId: string,
  id: string,
): Promise<ProvisioningTokenRow | undefined> {
  return findWhere(db, "device_provisioning_tokens", { team_id: teamId, id });
}

export async function findProvisioningTokenByDigest(
  db: Db,
  digest: string,
): Promise<ProvisioningTokenRow | undefined> {
  return findWhere(db, "device_provisioning_tokens", { digest });
}

export async function updateProvisioningToken(
  db: Db,
  teamId: string,
  id: string,
  change: { applicationId?: string | null; projectId?: string | null; expiresAt?: Date | null },
): Promise<ProvisioningTokenRow | undefined> {
  if (Object.values(change).every((value) => value === undefined)) {
    return findProvisioningToken(db, teamId, id);
  }
  return db
    .updateTable("device_provisioning_tokens")
    .set({
      ...(change.applicationId !== undefined && { application_id: change.applicationId }),
      ...(change.projectId !== undefined && { project_id: change.projectId }),
      ...(change.expiresAt !== undefined && { expires_at: change.expiresAt }),
    })
    .where("team_id", "=", teamId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProvisioningToken(
  db: Db,
  teamId: string,
  id: string,
): Promise<ProvisioningTokenRow | undefined> {
  return db
    .deleteFrom("device_provisioning_tokens")
    .where("team_id", "=", teamId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}
