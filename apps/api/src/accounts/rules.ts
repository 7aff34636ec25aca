// What changing or deleting an account takes, shared by the caller's own routes (/user) and the
// administrators' (/users/{userId}): uniqueness of username and email, the default team, the last
// administrator, the teams a deleted user owns alone, and sessions ended at once.
import { actsAsAdmin, passwordProblem } from "@flowplane/auth";
import { RESERVED_USERNAMES, type UpdateUserInput } from "@flowplane/contract";
import {
  activeAdminIds,
  type Db,
  deleteTeams,
  deleteUser,
  deleteUserSessions,
  findUser,
  findUserByLogin,
  isUniqueViolation,
  listProjects,
  lockTeam,
  memberTeamIds,
  soleOwnedTeams,
  updateUser,
  type UserRow,
  type UserUpdate,
} from "@flowplane/db";
import { ApiError, invalidRequest, notFound } from "../core/errors";
import { actorOf, type Context } from "../core/trpc";
import { recordTeamDeleted } from "../teams/index";
import { recordUserEvent } from "./events";

export const usernameTaken = () =>
  new ApiError(400, "invalid_username", "Username is not available", [
    { path: "username", message: "Not available" },
  ]);
export const emailTaken = () =>
  new ApiError(400, "invalid_email", "Email is already in use", [
    { path: "email", message: "Already in use" },
  ]);

/** Refuses a username nobody may take, or one (or an email) another user has. */
export async function checkAvailable(
  db: Db,
  change: { username?: string; email?: string | null },
  selfId?: string,
): Promise<void> {
  if (change.username !== undefined) {
    if (RESERVED_USERNAMES.includes(change.username)) throw usernameTaken();
    const other = await findUserByLogin(db, change.username);
    if (other && other.id !== selfId) throw usernameTaken();
  }
  if (change.email) {
    const other = await findUserByLogin(db, change.email);
    if (other && other.id !== selfId) throw emailTaken();
  }
}

/** The password's weakness as a 400, naming the field. */
export function checkPassword(
  password: string,
  user: { username?: string | null; name?: string | null; email?: string | null },
  code = "invalid_request",
): void {
  const problem = passwordProblem(password, user);
  if (problem) {
    throw new ApiError(400, code, `Password is too weak: ${problem}`, [
      { path: "password", message: problem },
    ]);
  }
}

const lastAdmin = (what: string) =>
  new ApiError(400, "invalid_request", `The last platform administrator cannot be ${what}`);

type AccountChange = Omit<UpdateUserInput, "userId">;

/**
 * Applies a change to a user's account. Administrator-only fields are refused for others; the last
 * active administrator cannot be suspended or demoted; suspension ends the user's sessions at once
 * (their tokens fail through the suspended flag, in every process, on the next request).
 */
export async function changeAccount(
  ctx: Context,
  userId: string,
  change: AccountChange,
): Promise<UserRow> {
  const asAdmin = actsAsAdmin(ctx.auth);
  const adminOnly = (["admin", "suspended", "password_expired"] as const).filter(
    (key) => change[key] !== undefined,
  );
  if (adminOnly.length > 0 && !asAdmin) {
    throw invalidRequest(
      `Only administrators may change ${adminOnly.join(", ")}`,
      adminOnly.map((path) => ({ path, message: "Administrators only" })),
    );
  }
  const before = await findUser(ctx.db, userId);
  if (!before) throw notFound();
  await checkAvailable(ctx.db, change, userId);
  if (change.defaultTeam) {
    const member = await memberTeamIds(ctx.db, userId, [change.defaultTeam]);
    if (member.length === 0) {
      throw new ApiError(400, "invalid_team", "The default team must be a team of the user", [
        { path: "defaultTeam", message: "Not a team of the user" },
      ]);
    }
  }

  const update: UserUpdate = {};
  if (change.name !== undefined) update.name = change.name;
  if (change.username !== undefined) update.username = change.username;
  if (change.email !== undefined) update.email = change.email;
  if (change.defaultTeam !== undefined) update.default_team_id = change.defaultTeam;
  if (change.admin !== undefined) update.admin = change.admin;
  if (change.suspended !== undefined) update.suspended = change.suspended;
  if (change.password_expired !== undefined) update.password_expired = change.password_expired;
  const updates = Object.entries(update)
    .filter(([key, value]) => before[key as keyof UserRow] !== value)
    .map(([key, value]) => ({ key, old: before[key as keyof UserRow], new: value }));
  if (updates.length === 0) return before;

  try {
    return await ctx.db.transaction().execute(async (trx) => {
      if (update.admin === false || update.suspended === true) {
        const admins = await activeAdminIds(trx);
        if (admins.length === 1 && admins[0] === userId) {
          throw lastAdmin(update.suspended ? "suspended" : "demoted");
        }
      }
      const after = await updateUser(trx, userId, update);
      if (!after) throw notFound();
      if (update.suspended) await deleteUserSessions(trx, userId);
      const event = userId === ctx.auth.userId ? "user.updated-user" : "users.updated-user";
      await recordUserEvent(trx, event, actorOf(ctx), after, { updates });
      return after;
    });
  } catch (error) {
    // Two requests took the same name at once: the unique index decides.
    if (isUniqueViolation(error))
      throw change.username !== undefined ? usernameTaken() : emailTaken();
    throw error;
  }
}

/**
 * Deletes a user with their tokens and sessions (by cascade), and the teams they own alone — which
 * must have no other member. The last active administrator cannot be deleted.
 */
export async function deleteAccount(ctx: Context, userId: string): Promise<void> {
  const instances = await ctx.db.transaction().execute(async (trx) => {
    const user = await findUser(trx, userId);
    if (!user) throw notFound();
    if (user.admin && !user.suspended) {
      const admins = await activeAdminIds(trx);
      if (admins.length === 1 && admins[0] === userId) throw lastAdmin("deleted");
    }
    const owned = await soleOwnedTeams(trx, userId);
    const shared = owned.filter((team) => team.others > 0);
    if (shared.length > 0) {
      throw invalidRequest(
        `The user is the only owner of teams with other members (${shared.map((t) => t.name).join(", ")}): make someone else an owner, or remove the members, first`,
      );
    }
    // Each team's row first, as a team's deletion does: no instance is created meanwhile.
    for (const team of owned) await lockTeam(trx, team.id);
    const instances = (
      await Promise.all(owned.map((team) => listProjects(trx, { teamId: team.id })))
    ).flatMap((projects) => projects.map((project) => project.id));
    await deleteTeams(
      trx,
      owned.map((team) => team.id),
    );
    for (const team of owned) await recordTeamDeleted(trx, actorOf(ctx), team);
    await deleteUser(trx, userId);
    const self = userId === ctx.auth.userId;
    await recordUserEvent(trx, self ? "user.deleted" : "users.deleted-user", actorOf(ctx), user, {
      deletedTeams: owned.map((team) => ({ id: team.id, name: team.name })),
    });
    return instances;
  });
  await ctx.instances?.discard(instances);
}
