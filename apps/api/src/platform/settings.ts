// The settings administrators change (FlowFuse's keys Flowplane has), their defaults, and the
// rules that read them.
import { actsAsAdmin, type Caller } from "@flowplane/auth";
import type { UpdateSettingsInput } from "@flowplane/contract";
import { type Db, listPlatformSettings } from "@flowplane/db";
import { forbidden } from "../core/errors";

export type PlatformSettings = Required<UpdateSettingsInput>;

/** What each setting is until an administrator changes it: Flowplane lets anyone create teams. */
export const SETTING_DEFAULTS: PlatformSettings = { "team:create": true };

export async function platformSettings(db: Db): Promise<PlatformSettings> {
  return { ...SETTING_DEFAULTS, ...(await listPlatformSettings(db)) } as PlatformSettings;
}

/** FlowFuse's rule: with `team:create` off, only administrators create teams (else 403). */
export async function mayCreateTeams(ctx: { db: Db; auth: Caller }): Promise<void> {
  if (actsAsAdmin(ctx.auth)) return;
  if (!(await platformSettings(ctx.db))["team:create"]) {
    throw forbidden("Only administrators may create teams on this platform");
  }
}
