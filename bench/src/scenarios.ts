// What the bench measures. Each scenario is the list of requests one connection repeats; the
// baseline gets the same requests (method, headers, body) and answers with the same status and
// body size.
import { generateToken } from "@flowplane/auth";
import type { Context, Step } from "./load";

export interface Fixture {
  adminToken: string;
  /** Teams the admin owns, at least one per connection. */
  teamIds: string[];
  /** A team the admin owns whose audit log has a full first page (and, at scale, a million more). */
  auditTeamId: string;
  /** Right shape, wrong checksum: refused before any database access. */
  malformedToken: string;
  /** Right shape and checksum, but no such token: one database lookup, then 401. */
  unknownToken: string;
  /** A user who signs in with a password (not the administrator, whose first one is expired). */
  login: { username: string; password: string };
  /** That user's session cookie (`sid=…`), signed in once, and a member of the admin's teams. */
  sessionCookie: string;
  /** A team of the admin's with an application of running hosted instances, and one of them. */
  instanceTeamId: string;
  instanceId: string;
  /** Devices of an application (no target), one per connection: their check-in is in step, 200 `{}`. */
  devices: { id: string; token: string }[];
  /** Their application. */
  deviceApplicationId: string;
}

export interface Scenario {
  id: string;
  title: string;
  /** How to read the req/s figure when one cycle is more than one request. */
  note?: string;
  /** The steps connection `connection` repeats. `tag` differs per run (fresh names per run). */
  steps(fixture: Fixture, connection: number, tag: string): Step[];
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The audit log's default page size: the audit team gets this many renames, a full first page. */
export const AUDIT_PAGE = 100;
const json = { "content-type": "application/json" };

const deviceOf = (f: Fixture, connection: number) => f.devices[connection % f.devices.length]!;

/** The agent's check-in body (`getState()`) of a device in step with no target. */
function checkIn(f: Fixture, connection: number, state: string): Step {
  const device = deviceOf(f, connection);
  return {
    method: "POST",
    path: `/api/v1/devices/${device.id}/live/state`,
    headers: { ...bearer(device.token), ...json },
    body: JSON.stringify({
      ownerType: "application",
      project: null,
      application: f.deviceApplicationId,
      snapshot: null,
      settings: null,
      state,
      mode: "autonomous",
      agentVersion: "4.2.1",
      nodejsVersion: "v20.20.2",
    }),
    expect: 200,
  };
}

export const SCENARIOS: Scenario[] = [
  {
    id: "device-check-in",
    title: "POST /api/v1/devices/{id}/live/state (the agent's check-in)",
    note: "each connection is a device of its own polling in step (200 {}), reporting the same thing each time: one statement authenticates it, reads its target, and writes only when the stored lastSeenAt is over a second old",
    steps: (f, connection) => [checkIn(f, connection, "running")],
  },
  {
    id: "device-check-in-changed",
    title: "POST /api/v1/devices/{id}/live/state, a new state each time",
    note: "each connection's device alternates its reported state (running, stopped), so every check-in writes its row: what a fleet polling once a minute costs per check-in",
    steps: (f, connection) => [
      checkIn(f, connection, "running"),
      checkIn(f, connection, "stopped"),
    ],
  },
  {
    id: "device-settings",
    title: "GET /api/v1/devices/{id}/live/settings",
    note: "each connection is a device of its own",
    steps: (f, connection) => {
      const device = deviceOf(f, connection);
      return [
        {
          method: "GET",
          path: `/api/v1/devices/${device.id}/live/settings`,
          headers: bearer(device.token),
          expect: 200,
        },
      ];
    },
  },
  {
    id: "teams-list",
    title: "GET /api/v1/user/teams",
    steps: (f) => [
      { method: "GET", path: "/api/v1/user/teams", headers: bearer(f.adminToken), expect: 200 },
    ],
  },
  {
    id: "team-get",
    title: "GET /api/v1/teams/{id}",
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/teams/${f.teamIds[0]}`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
  {
    id: "team-put",
    title: "PUT /api/v1/teams/{id}",
    note: "each connection renames its own team, alternating two names, so every request is a real change (an unchanged name would skip the write) and connections do not queue on one row lock",
    steps: (f, connection, tag) => {
      const teamId = f.teamIds[connection % f.teamIds.length]!;
      const put = (name: string): Step => ({
        method: "PUT",
        path: `/api/v1/teams/${teamId}`,
        headers: { ...bearer(f.adminToken), ...json },
        body: JSON.stringify({ name }),
        expect: 200,
      });
      return [put(`Bench ${tag} ${connection} A`), put(`Bench ${tag} ${connection} B`)];
    },
  },
  {
    id: "team-members",
    title: "GET /api/v1/teams/{id}/members",
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/teams/${f.teamIds[0]}/members`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
  {
    id: "audit-log",
    title: "GET /api/v1/teams/{id}/audit-log (first page)",
    note: `the first ${AUDIT_PAGE} entries of a team's log, newest first, with \`count\` (counted up to 1000); at scale the same team's log has 1,000,000 older entries below them`,
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/teams/${f.auditTeamId}/audit-log`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
  {
    id: "users-list",
    title: "GET /api/v1/users (administrator, first page of 20)",
    note: "every user of the platform, oldest first, with `count` (counted up to 1000): at scale the table has 100,000 more users after the first page",
    steps: (f) => [
      { method: "GET", path: "/api/v1/users?limit=20", headers: bearer(f.adminToken), expect: 200 },
    ],
  },
  {
    id: "teams-all",
    title: "GET /api/v1/teams (administrator, first page of 20)",
    note: "every team of the platform, oldest first, with `count` (counted up to 1000): at scale the table has 10,000 more teams after the first page",
    steps: (f) => [
      { method: "GET", path: "/api/v1/teams?limit=20", headers: bearer(f.adminToken), expect: 200 },
    ],
  },
  {
    id: "snapshot-create",
    title: "POST /api/v1/projects/{id}/snapshots",
    note: "takes a snapshot of a running hosted instance: reads its stored flows, credentials and settings, seals the secrets (AES-256-CTR under a key derived per snapshot), inserts the row and its audit entry in one transaction, then reads it back for the reply; every request adds a snapshot, so the list below has thousands",
    steps: (f, connection, tag) => [
      {
        method: "POST",
        path: `/api/v1/projects/${f.instanceId}/snapshots`,
        headers: { ...bearer(f.adminToken), ...json },
        body: JSON.stringify({ name: `Bench ${tag} ${connection}` }),
        expect: 200,
      },
    ],
  },
  {
    id: "snapshot-list",
    title: "GET /api/v1/projects/{id}/snapshots (first page of 20)",
    note: "an instance's snapshots, newest first, with `count`; run after snapshot-create, the instance has every snapshot that scenario took (thousands) below the first page",
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/projects/${f.instanceId}/snapshots?limit=20`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
  {
    id: "token-pair",
    title: "POST /api/v1/user/tokens + DELETE /api/v1/user/tokens/{id}",
    note: "one cycle is two requests (create, then revoke the token just created, its id taken from the create response); req/s counts requests, so pairs/s is half of it",
    steps: (f) => [
      {
        method: "POST",
        path: "/api/v1/user/tokens",
        headers: { ...bearer(f.adminToken), ...json },
        body: JSON.stringify({ name: "bench" }),
        expect: 200,
        capture: (body: string, context: Context) => {
          try {
            context.tokenId = (JSON.parse(body) as { id?: string }).id;
          } catch {
            context.tokenId = undefined;
          }
        },
      },
      {
        method: "DELETE",
        path: (context) => `/api/v1/user/tokens/${String(context.tokenId ?? "missing")}`,
        headers: bearer(f.adminToken),
        expect: 204,
      },
    ],
  },
  {
    id: "session-teams",
    title: "GET /api/v1/user/teams, signed in (session cookie)",
    steps: (f) => [
      {
        method: "GET",
        path: "/api/v1/user/teams",
        headers: { cookie: f.sessionCookie },
        expect: 200,
      },
    ],
  },
  {
    id: "login",
    title: "POST /account/login",
    note: "each request checks the password (scrypt, N=2^15, r=8: 32 MiB, tens of ms of one core by design) and creates a session; the baseline answers the same bytes without hashing, so the ratio is the price of a memory-hard hash",
    steps: (f) => [
      {
        method: "POST",
        path: "/account/login",
        headers: json,
        body: JSON.stringify(f.login),
        expect: 200,
      },
    ],
  },
  {
    id: "token-malformed",
    title: "GET /api/v1/user/teams, malformed token → 401",
    steps: (f) => [
      {
        method: "GET",
        path: "/api/v1/user/teams",
        headers: bearer(f.malformedToken),
        expect: 401,
      },
    ],
  },
  {
    id: "token-unknown",
    title: "GET /api/v1/user/teams, unknown well-formed token → 401",
    steps: (f) => [
      { method: "GET", path: "/api/v1/user/teams", headers: bearer(f.unknownToken), expect: 401 },
    ],
  },
  {
    id: "token-unknown-fresh",
    title: "GET /api/v1/user/teams, a new unknown well-formed token each request → 401",
    note: "every request carries a token never seen before (valid checksum), so no cache of unknown digests can answer it: one database lookup per request, as for someone trying made-up tokens; the baseline gets the same fresh tokens",
    steps: () => [
      {
        method: "GET",
        path: "/api/v1/user/teams",
        headers: () => bearer(generateToken("personalAccessToken")),
        expect: 401,
      },
    ],
  },
  {
    id: "instances-list",
    title: "GET /api/v1/teams/{id}/applications (instances)",
    note: "the team's application with its 3 hosted instances, each with its editor URL from the runtime",
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/teams/${f.instanceTeamId}/applications`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
  {
    id: "instance-status",
    title: "GET /api/v1/projects/{id}/status",
    note: "a running instance: its row, then the state the runtime reports",
    steps: (f) => [
      {
        method: "GET",
        path: `/api/v1/projects/${f.instanceId}/status`,
        headers: bearer(f.adminToken),
        expect: 200,
      },
    ],
  },
];

/** Sends one cycle of steps sequentially, as a check and to learn the response sizes. */
export async function probe(
  baseUrl: string,
  steps: Step[],
): Promise<{ status: number; bytes: number }[]> {
  const context: Context = {};
  const out = [];
  for (const step of steps) {
    const path = typeof step.path === "string" ? step.path : step.path(context);
    const response = await fetch(baseUrl + path, {
      method: step.method,
      headers: typeof step.headers === "function" ? step.headers(context) : step.headers,
      ...(step.body === undefined ? {} : { body: step.body }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = await response.text();
    if (response.status !== step.expect) {
      throw new Error(
        `${step.method} ${path}: expected ${step.expect}, got ${response.status}: ${body.slice(0, 300)}`,
      );
    }
    step.capture?.(body, context);
    out.push({ status: response.status, bytes: Buffer.byteLength(body) });
  }
  return out;
}

/** The baseline's version of a scenario: same requests, answered with the probed status and size. */
export function baselineSteps(steps: Step[], probed: { status: number; bytes: number }[]): Step[] {
  return steps.map((step, i) => {
    const { status, bytes } = probed[i]!;
    return {
      method: step.method,
      path: `/b/${bytes}/${status}`,
      headers: step.headers,
      ...(step.body === undefined ? {} : { body: step.body }),
      expect: status,
    };
  });
}
