// Who may read a team's events, and which: the route's own permission (`team:events`, viewers and
// up), then, per event, the permission to read the audit log of what it is about — a team's and an
// application's entries are the owners', an instance's and a device's the viewers' — so that the
// stream shows a caller what the audit log would, and no more.
import { authorize, type Permission } from "@flowplane/auth";
import { AUDIT_LOG_SCOPES } from "@flowplane/contract";
import { type Db, findTeamForUser } from "@flowplane/db";
import type { Identity } from "../core/credentials/identity";
import { ApiError, forbidden, notFound, unauthorized } from "../core/errors";

/** The permission that reads the audit log of each kind of resource an event is about. */
const AUDIT_PERMISSION: Record<(typeof AUDIT_LOG_SCOPES)[number], Permission> = {
  team: "team:audit-log",
  application: "application:audit-log",
  project: "project:audit-log",
  device: "device:audit-log",
};

/**
 * The kinds of resource whose events the caller may read in the team; throws the refusal the API
 * answers (404 for a team they cannot see, 403 for a token that may not read it).
 */
export async function visibleKinds(db: Db, auth: Identity, teamId: string): Promise<string[]> {
  // A provisioning token or a device's one-time code reads nothing.
  if (auth.provisioning || auth.otc) throw unauthorized();
  if (auth.passwordExpired) {
    throw forbidden("Your password has expired: choose a new one first", "password_expired");
  }
  const found = await findTeamForUser(db, teamId, auth.userId);
  const team = { id: teamId, exists: found !== undefined, membershipRole: found?.role };
  const decision = authorize("team:events", auth, team);
  if (!decision.allowed) throw decision.status === 404 ? notFound() : forbidden(decision.message);
  return AUDIT_LOG_SCOPES.filter((kind) => authorize(AUDIT_PERMISSION[kind], auth, team).allowed);
}

/** The answer to a cursor behind retention: the events after it are gone. */
export const eventsExpired = () =>
  new ApiError(
    410,
    "events_expired",
    "Events after this cursor are past the retention window: read from the start again (no cursor)",
  );
