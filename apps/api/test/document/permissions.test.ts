// The permission matrix as documented and as used: docs/permissions.md is what the generator
// writes today, and every permission is declared by some procedure or reserved for a later area.
import { type Permission, PERMISSIONS } from "@flowplane/auth";
import { readFile } from "node:fs/promises";
import { expect, test } from "vitest";
import {
  PERMISSIONS_DOC,
  PERMISSIONS_DOC_COMMAND,
  permissionsDoc,
} from "../../scripts/permissions-doc";
import { restRoutes } from "../../src/core/rest";
import { EVENTS_DOC } from "../../src/events/stream";
import { appRouter } from "../../src/router";
import type { Meta } from "../../src/core/trpc";

/** Permissions in the matrix that no procedure declares yet, and the area that will. */
const RESERVED: Partial<Record<Permission, string>> = {};

test("docs/permissions.md is up to date with the matrix and the routes", async () => {
  const written = await readFile(PERMISSIONS_DOC, "utf8").catch(() => "");
  expect(
    written,
    `docs/permissions.md is stale: run \`${PERMISSIONS_DOC_COMMAND}\` and commit the result`,
  ).toBe(await permissionsDoc());
});

test("every permission in the matrix is declared by a procedure, or reserved for a later area", () => {
  // tRPC keeps every procedure under its dotted path, as restRoutes reads them.
  const procedures = Object.values(
    appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>,
  );
  const used = new Set<string>(procedures.flatMap((p) => p._def.meta?.permission ?? []));
  // A route outside tRPC that applies a permission no procedure does: the team's events.
  if (EVENTS_DOC.permission) used.add(EVENTS_DOC.permission);
  const unused = (Object.keys(PERMISSIONS) as Permission[]).filter(
    (permission) => !used.has(permission) && !(permission in RESERVED),
  );
  expect(
    unused,
    "permissions no procedure declares: use them, remove them, or list them in RESERVED",
  ).toEqual([]);
  const reservedButUsed = Object.keys(RESERVED).filter((permission) => used.has(permission));
  expect(reservedButUsed, "reserved permissions now in use: remove them from RESERVED").toEqual([]);
  // Each REST operation's permission is one of the matrix's (the type says so; the data too).
  for (const route of restRoutes(appRouter)) {
    expect(PERMISSIONS, route.path).toHaveProperty([
      (route.procedure._def.meta as Meta).permission,
    ]);
  }
});
