// Every migration, in order. Listed statically so that a bundled server carries them.
import type { Migration } from "kysely";
import * as foundation from "./2026-11-21T1200-foundation";

export const migrations: Record<string, Migration> = {
  "2026-11-21T1200-foundation": foundation,
};
