// The permission matrix (FlowFuse's names and levels) and the one function that decides a request.
import { Role } from "@flowplane/contract";

export type Access = "read" | "write";

/**
 * `team`: needs a team role of at least `role` in the team the request names.
 * `self`: the caller acting on their own account (another user's: administrators only).
 * `admin`: platform administrators whose token carries admin opt-in.
 * `user`: any authenticated caller.
 */
export type PermissionRule =
  /** `orSelf`: a member below the role may still act on their own membership (leaving a team). */
  | { kind: "team"; role: number; access: Access; orSelf?: true }
  | { kind: "self" | "admin" | "user"; access: Access }
  /**
   * `wholeAccount`: a change to the account itself (its name, email, password, deletion, the
   * teams it joins), beyond any one team: a token restricted to teams may not make it.
   */
  | { kind: "self"; access: Access; wholeAccount: true };

export const PERMISSIONS = {
  "user:read": { kind: "self", access: "read" },
  "user:edit": { kind: "self", access: "write", wholeAccount: true },
  "user:delete": { kind: "self", access: "write", wholeAccount: true },
  "user:list": { kind: "admin", access: "read" },
  "user:create": { kind: "admin", access: "write" },
  "user:team:list": { kind: "self", access: "read" },
  "settings:read": { kind: "user", access: "read" },
  "settings:edit": { kind: "admin", access: "write" },
  "platform:stats": { kind: "admin", access: "read" },
  "invitation:list": { kind: "admin", access: "read" },
  "user:token:list": { kind: "self", access: "read" },
  "user:token:edit": { kind: "self", access: "write" },
  "team:create": { kind: "user", access: "write" },
  "team:list": { kind: "admin", access: "read" },
  "team:read": { kind: "team", role: Role.dashboard, access: "read" },
  "team:edit": { kind: "team", role: Role.owner, access: "write" },
  "team:delete": { kind: "team", role: Role.owner, access: "write" },
  "team:audit-log": { kind: "team", role: Role.owner, access: "read" },
  "team:user:list": { kind: "team", role: Role.viewer, access: "read" },
  /** Searching a team's applications, instances and devices (FlowFuse's: viewers and up). */
  "team:search": { kind: "team", role: Role.viewer, access: "read" },
  /** A team's events (docs/events.md): each one further needs its audit log's permission. */
  "team:events": { kind: "team", role: Role.viewer, access: "read" },
  "team:user:invite": { kind: "team", role: Role.owner, access: "write" },
  "team:user:remove": { kind: "team", role: Role.owner, access: "write", orSelf: true },
  "team:user:change-role": { kind: "team", role: Role.owner, access: "write" },
  "team-type:list": { kind: "user", access: "read" },
  "team-type:read": { kind: "user", access: "read" },
  "team-type:create": { kind: "admin", access: "write" },
  "team-type:edit": { kind: "admin", access: "write" },
  "team-type:delete": { kind: "admin", access: "write" },
  "platform:audit-log": { kind: "admin", access: "read" },
  /** Beyond FlowFuse, which hides a user's own account events from them. */
  "user:audit-log": { kind: "self", access: "read" },
  "user:invitation:list": { kind: "self", access: "read" },
  /**
   * A person's notifications (FlowFuse guards them all with `user:edit`): a read-only token may
   * list them but not mark or delete them; a token restricted to teams may do both, as its
   * person's inbox is not any team's.
   */
  "user:notification:list": { kind: "self", access: "read" },
  "user:notification:edit": { kind: "self", access: "write" },
  /** Viewers read too (FlowFuse: members), as the issue asks. */
  "broker:clients:list": { kind: "team", role: Role.viewer, access: "read" },
  "broker:clients:create": { kind: "team", role: Role.owner, access: "write" },
  "broker:clients:edit": { kind: "team", role: Role.owner, access: "write" },
  "broker:clients:delete": { kind: "team", role: Role.owner, access: "write" },
  /** Flowplane's: the tokens an external broker uses to call /api/comms/v2. */
  "platform:broker-token:list": { kind: "admin", access: "read" },
  "platform:broker-token:create": { kind: "admin", access: "write" },
  "platform:broker-token:delete": { kind: "admin", access: "write" },
  /** Applications use the instance permissions, as in FlowFuse. */
  "project:create": { kind: "team", role: Role.owner, access: "write" },
  "project:read": { kind: "team", role: Role.viewer, access: "read" },
  "project:edit": { kind: "team", role: Role.owner, access: "write" },
  /** A body with only `settings.env`; anything else needs project:edit. */
  "project:edit-env": { kind: "team", role: Role.member, access: "write" },
  "project:delete": { kind: "team", role: Role.owner, access: "write" },
  "project:change-status": { kind: "team", role: Role.owner, access: "write" },
  "project:status": { kind: "team", role: Role.dashboard, access: "read" },
  "project:log": { kind: "team", role: Role.viewer, access: "read" },
  /** Flowplane's: a script's credential for one instance's editor (its rights follow the role). */
  "project:editor-token": { kind: "team", role: Role.viewer, access: "write" },
  "team:projects:list": { kind: "team", role: Role.viewer, access: "read" },
  "project:snapshot:create": { kind: "team", role: Role.member, access: "write" },
  "project:snapshot:list": { kind: "team", role: Role.viewer, access: "read" },
  "project:snapshot:read": { kind: "team", role: Role.viewer, access: "read" },
  "project:snapshot:delete": { kind: "team", role: Role.owner, access: "write" },
  "project:snapshot:rollback": { kind: "team", role: Role.member, access: "write" },
  "project:snapshot:set-target": { kind: "team", role: Role.member, access: "write" },
  "project:snapshot:export": { kind: "team", role: Role.member, access: "write" },
  "snapshot:meta": { kind: "team", role: Role.viewer, access: "read" },
  "snapshot:full": { kind: "team", role: Role.member, access: "read" },
  "snapshot:export": { kind: "team", role: Role.member, access: "write" },
  "snapshot:edit": { kind: "team", role: Role.owner, access: "write" },
  "snapshot:delete": { kind: "team", role: Role.owner, access: "write" },
  "snapshot:import": { kind: "team", role: Role.owner, access: "write" },
  /** The caller must also own a team (checked by the route), as in FlowFuse. */
  "project:check-name": { kind: "user", access: "read" },
  "project-type:list": { kind: "user", access: "read" },
  "project-type:read": { kind: "user", access: "read" },
  "project-type:create": { kind: "admin", access: "write" },
  "project-type:edit": { kind: "admin", access: "write" },
  "project-type:delete": { kind: "admin", access: "write" },
  "stack:list": { kind: "user", access: "read" },
  "stack:read": { kind: "user", access: "read" },
  "stack:create": { kind: "admin", access: "write" },
  "stack:edit": { kind: "admin", access: "write" },
  "stack:delete": { kind: "admin", access: "write" },
  "template:list": { kind: "user", access: "read" },
  "template:read": { kind: "user", access: "read" },
  "template:create": { kind: "admin", access: "write" },
  "template:edit": { kind: "admin", access: "write" },
  "template:delete": { kind: "admin", access: "write" },
  // Remote devices (FlowFuse's levels). A device's own token and provisioning tokens reach routes
  // of their own, never these.
  "team:device:list": { kind: "team", role: Role.viewer, access: "read" },
  "device:create": { kind: "team", role: Role.owner, access: "write" },
  "device:read": { kind: "team", role: Role.viewer, access: "read" },
  /**
   * Restarting, suspending and starting a device's Node-RED through its agent: members and up, as
   * the people who run a line need (FlowFuse keeps it for owners; issue 36 asks for members).
   */
  "device:change-status": { kind: "team", role: Role.member, access: "write" },
  "device:edit": { kind: "team", role: Role.owner, access: "write" },
  /** A body with only `targetSnapshot`; anything else needs device:edit. */
  "device:snapshot:set-target": { kind: "team", role: Role.member, access: "write" },
  /** An application's device's own snapshots: of what it runs. */
  "device:snapshot:list": { kind: "team", role: Role.viewer, access: "read" },
  "device:snapshot:read": { kind: "team", role: Role.viewer, access: "read" },
  "device:snapshot:create": { kind: "team", role: Role.member, access: "write" },
  "device:snapshot:delete": { kind: "team", role: Role.owner, access: "write" },
  "device:edit-env": { kind: "team", role: Role.member, access: "write" },
  /** Developer mode and the remote editor's tunnel (FlowFuse's device:editor). */
  "device:editor": { kind: "team", role: Role.member, access: "write" },
  "device:delete": { kind: "team", role: Role.owner, access: "write" },
  "team:device:bulk-delete": { kind: "team", role: Role.owner, access: "write" },
  "team:device:bulk-edit": { kind: "team", role: Role.owner, access: "write" },
  /** Every device of the platform. */
  "device:list": { kind: "admin", access: "read" },
  "device:audit-log": { kind: "team", role: Role.viewer, access: "read" },
  "application:audit-log": { kind: "team", role: Role.owner, access: "read" },
  "project:audit-log": { kind: "team", role: Role.viewer, access: "read" },
  "team:device:provisioning-token:list": { kind: "team", role: Role.owner, access: "read" },
  "team:device:provisioning-token:create": { kind: "team", role: Role.owner, access: "write" },
  "team:device:provisioning-token:edit": { kind: "team", role: Role.owner, access: "write" },
  "team:device:provisioning-token:delete": { kind: "team", role: Role.owner, access: "write" },
  "application:device-group:list": { kind: "team", role: Role.member, access: "read" },
  "team:device-group:list": { kind: "team", role: Role.member, access: "read" },
  "application:device-group:read": { kind: "team", role: Role.member, access: "read" },
  "application:device-group:create": { kind: "team", role: Role.owner, access: "write" },
  "application:device-group:update": { kind: "team", role: Role.owner, access: "write" },
  "application:device-group:delete": { kind: "team", role: Role.owner, access: "write" },
  "application:device-group:membership:update": {
    kind: "team",
    role: Role.owner,
    access: "write",
  },
  /** The team library: FlowFuse's `library:entry:*` are members'; viewers read too, as the issue asks. */
  "library:entry:list": { kind: "team", role: Role.viewer, access: "read" },
  "library:entry:create": { kind: "team", role: Role.member, access: "write" },
  "library:entry:delete": { kind: "team", role: Role.member, access: "write" },
  /** Pipelines: owners create, edit, deploy and delete; viewers and up read (FlowFuse: members). */
  "application:pipeline:list": { kind: "team", role: Role.viewer, access: "read" },
  "team:pipeline:list": { kind: "team", role: Role.viewer, access: "read" },
  "pipeline:read": { kind: "team", role: Role.viewer, access: "read" },
  "pipeline:create": { kind: "team", role: Role.owner, access: "write" },
  "pipeline:edit": { kind: "team", role: Role.owner, access: "write" },
  "pipeline:delete": { kind: "team", role: Role.owner, access: "write" },
  /** Flowplane's: what a deploy did, read by whoever may read the team's pipelines. */
  "operation:read": { kind: "team", role: Role.viewer, access: "read" },
  /** Rollouts (Flowplane's): owners start, approve, pause, resume and abort; viewers and up read. */
  "application:rollout:list": { kind: "team", role: Role.viewer, access: "read" },
  "rollout:read": { kind: "team", role: Role.viewer, access: "read" },
  "rollout:create": { kind: "team", role: Role.owner, access: "write" },
  "rollout:edit": { kind: "team", role: Role.owner, access: "write" },
  /** Webhooks (Flowplane's): owners only, reading too — a hook's log shows what the team does. */
  "team:webhook:list": { kind: "team", role: Role.owner, access: "read" },
  "team:webhook:create": { kind: "team", role: Role.owner, access: "write" },
  "team:webhook:edit": { kind: "team", role: Role.owner, access: "write" },
  "team:webhook:delete": { kind: "team", role: Role.owner, access: "write" },
} as const satisfies Record<string, PermissionRule>;

export type Permission = keyof typeof PERMISSIONS;

/** What a token may do, on top of what its owner may do. */
export interface TokenScope {
  readOnly: boolean;
  adminOptIn: boolean;
  /** null: every team of the owner. */
  teamIds: readonly string[] | null;
  expiresAt: Date | null;
}

export interface Caller {
  userId: string;
  admin: boolean;
  scope: TokenScope;
}

/**
 * True when the caller acts with administrator rights: an admin whose token opted in and is not
 * restricted to teams. A token restricted to teams is meant for those teams' work; it never
 * carries the platform's (FlowFuse leaves an opted-in token's admin rights outside its teams).
 */
export function actsAsAdmin(caller: Caller): boolean {
  return caller.admin && caller.scope.adminOptIn && caller.scope.teamIds === null;
}

/** Why an administrator's opted-in token still does not act as one, for the 403's message. */
const RESTRICTED_ADMIN =
  "This token is restricted to teams: administration needs an admin opt-in token that is not";

/** Whether the token's team restriction lets it reach this team at all. */
export function tokenReachesTeam(scope: TokenScope, teamId: string): boolean {
  return scope.teamIds === null || scope.teamIds.includes(teamId);
}

export type Decision =
  | { allowed: true }
  /** `message`: why, where the status alone would not tell the caller what to do. */
  | { allowed: false; status: 403 | 404; message?: string };

function notAdmin(caller: Caller): Decision {
  return caller.admin && caller.scope.adminOptIn
    ? { allowed: false, status: 403, message: RESTRICTED_ADMIN }
    : { allowed: false, status: 403 };
}

/**
 * Decide a request. `membershipRole` is the caller's role in the request's team (undefined when
 * not a member or the team does not exist); it matters for team permissions only. The order
 * matters: a team the caller cannot see is 404 before anything reveals that it exists.
 */
export function authorize(
  permission: Permission,
  caller: Caller,
  team?: { id: string; membershipRole: number | undefined; exists: boolean },
  /** The user the request is about, when it names one (`self` rules, and team rules `orSelf`). */
  subject?: { userId: string },
): Decision {
  const rule: PermissionRule = PERMISSIONS[permission];
  const admin = actsAsAdmin(caller);

  if (rule.kind === "team") {
    if (!team || !team.exists || !tokenReachesTeam(caller.scope, team.id)) {
      return { allowed: false, status: 404 };
    }
    if (team.membershipRole === undefined && !admin) return { allowed: false, status: 404 };
  }
  if (rule.access === "write" && caller.scope.readOnly) return { allowed: false, status: 403 };
  if ("wholeAccount" in rule && caller.scope.teamIds !== null) {
    return {
      allowed: false,
      status: 403,
      message:
        "This token is restricted to teams: changes to the whole account need a token that is not",
    };
  }

  switch (rule.kind) {
    case "user":
      return { allowed: true };
    case "self":
      return !subject || subject.userId === caller.userId || admin
        ? { allowed: true }
        : notAdmin(caller);
    case "admin":
      return admin ? { allowed: true } : notAdmin(caller);
    case "team": {
      const level = admin ? Role.admin : (team!.membershipRole ?? 0);
      if (level >= rule.role) return { allowed: true };
      const self = "orSelf" in rule && subject?.userId === caller.userId;
      return self ? { allowed: true } : { allowed: false, status: 403 };
    }
  }
}
