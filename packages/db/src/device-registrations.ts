// Devices registered from their own terminal: a registration waits (pending) for a signed-in
// person, who claims it while their form creates the device, then completes it with the device;
// the agent's poll takes a completed one once (deleted as it is read), giving the device a new
// one-time code. Every read is of a registration not yet expired.
import { type Kysely, sql } from "kysely";
import type { DeviceOtc } from "./devices";
import type { Database } from "./schema";

type Db = Kysely<Database>;

export interface NewDeviceRegistration {
  sessionDigest: string;
  doneDigest: string;
  expiresAt: Date;
  requestedFrom: string;
}

/** What the confirming person is shown of a waiting registration. */
export interface WaitingDeviceRegistration {
  requestedFrom: string | null;
  createdAt: Date;
}

export async function insertDeviceRegistration(db: Db, row: NewDeviceRegistration): Promise<void> {
  await db
    .insertInto("device_registrations")
    .values({
      session_digest: row.sessionDigest,
      done_digest: row.doneDigest,
      expires_at: row.expiresAt,
      requested_from: row.requestedFrom,
    })
    .execute();
}

/** The registration of this page token when it waits for a person (pending, not expired). */
export async function pendingDeviceRegistration(
  db: Db,
  sessionDigest: string,
): Promise<WaitingDeviceRegistration | undefined> {
  const row = await db
    .selectFrom("device_registrations")
    .select(["requested_from", "created_at"])
    .where("session_digest", "=", sessionDigest)
    .where("status", "=", "pending")
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return row && { requestedFrom: row.requested_from, createdAt: row.created_at };
}

/** Takes a pending registration for a person's form: false when it is not (any more) pending. */
export async function claimDeviceRegistration(db: Db, sessionDigest: string): Promise<boolean> {
  const result = await db
    .updateTable("device_registrations")
    .set({ status: "claimed" })
    .where("session_digest", "=", sessionDigest)
    .where("status", "=", "pending")
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives a claimed registration back (its form failed): the person may try again. */
export async function releaseDeviceRegistration(db: Db, sessionDigest: string): Promise<void> {
  await db
    .updateTable("device_registrations")
    .set({ status: "pending" })
    .where("session_digest", "=", sessionDigest)
    .where("status", "=", "claimed")
    .execute();
}

/**
 * Completes a claimed registration with the device its form created, giving the agent's poll
 * at least five more minutes to take it (one confirmed at its last moment is still taken). False
 * when it is gone (expired and swept while the form created the device).
 */
export async function completeDeviceRegistration(
  db: Db,
  sessionDigest: string,
  deviceId: string,
): Promise<boolean> {
  const updated = await db
    .updateTable("device_registrations")
    .set({
      status: "done",
      device_id: deviceId,
      expires_at: sql<Date>`greatest(expires_at, now() + interval '5 minutes')`,
    })
    .where("session_digest", "=", sessionDigest)
    .where("status", "=", "claimed")
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/**
 * The agent's poll: a completed registration is deleted and its device given this one-time code,
 * in one statement (of two polls only one gets it): its device's id. Else whether one is still
 * waiting (pending or claimed): "pending"; undefined when there is none, or it expired.
 */
export async function pollDeviceRegistration(
  db: Db,
  doneDigest: string,
  otc: DeviceOtc,
): Promise<{ deviceId: string } | "pending" | undefined> {
  const taken = await db
    .with("taken", (q) =>
      q
        .deleteFrom("device_registrations")
        .where("done_digest", "=", doneDigest)
        .where("status", "=", "done")
        .where("expires_at", ">", sql<Date>`now()`)
        .returning("device_id"),
    )
    .updateTable("devices")
    .set({ otc_digest: otc.digest, otc_expires_at: otc.expiresAt, updated_at: sql`now()` })
    .where("id", "in", (eb) => eb.selectFrom("taken").select("device_id"))
    .returning("id")
    .executeTakeFirst();
  if (taken) return { deviceId: taken.id };
  const waiting = await db
    .selectFrom("device_registrations")
    .select("status")
    .where("done_digest", "=", doneDigest)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return waiting ? "pending" : undefined;
}

/** Deletes the registrations past their time (the housekeeping sweep). */
export async function deleteExpiredDeviceRegistrations(db: Db): Promise<void> {
  await db.deleteFrom("device_registrations").where("expires_at", "<=", new Date()).execute();
}
