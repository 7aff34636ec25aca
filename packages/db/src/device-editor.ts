// A device's developer mode and its remote editor (issue 36): the mode it runs in and the digest of
// the token its editor tunnel opens with (never the token itself).
import type { Kysely } from "kysely";
import type { Database } from "./schema";

type Db = Kysely<Database>;

/** What the editor's routes need of a device. */
export interface DeviceEditorRow {
  id: string;
  team_id: string;
  name: string;
  mode: string;
  editor_token_digest: string | null;
}

const COLUMNS = ["id", "team_id", "name", "mode", "editor_token_digest"] as const;

export async function findDeviceEditor(db: Db, id: string): Promise<DeviceEditorRow | undefined> {
  return db.selectFrom("devices").select(COLUMNS).where("id", "=", id).executeTakeFirst();
}

/**
 * Sets the device's mode; leaving developer mode clears its editor token (the tunnel closes).
 * Answers the device as it was before, none when there is no such device.
 */
export async function setDeviceMode(
  db: Db,
  id: string,
  mode: "developer" | "autonomous",
): Promise<DeviceEditorRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom("devices")
      .select(COLUMNS)
      .where("id", "=", id)
      .forUpdate()
      .executeTakeFirst();
    if (!before) return undefined;
    await trx
      .updateTable("devices")
      .set({ mode, ...(mode === "autonomous" && { editor_token_digest: null }) })
      .where("id", "=", id)
      .execute();
    return before;
  });
}

/** Keeps the digest of the device's new editor token, or none (the editor is disabled). */
export async function setDeviceEditorToken(
  db: Db,
  id: string,
  digest: string | null,
): Promise<void> {
  await db
    .updateTable("devices")
    .set({ editor_token_digest: digest })
    .where("id", "=", id)
    .execute();
}
