// Walks every operation of the served document and sends each input what PostgreSQL cannot store
// (NUL, lone surrogates), what is too long, what is the wrong type, and what is not even a JSON
// object: every answer must be a 4xx in the `{ code, error, requestId }` envelope, never a 5xx,
// and nothing may change. Operations are read from the document, so a new one is walked the
// moment it is declared.
import { DEFAULT_TEAM_TYPE_ID } from "@flowplane/db";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Reply, startServer, type TestServer } from "../support/harness";
import {
  createApplication,
  createBrokerClient,
  createInstance,
  createDevice,
  createOperation,
  createPipeline,
  createNotification,
  createWebhookWithDelivery,
  createRollout,
  createSnapshot,
  createInvitation,
} from "../support/team-fixtures";
import {
  accepts,
  isAgentOperation,
  type Operation,
  schemaWalker,
  type SchemaWalker,
} from "../support/walk";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  ({ deref, jsonTypes, example } = schemaWalker(server.document));
});
afterAll(() => server.close());

/** Runs the tasks, at most `width` at a time. */
async function inTurns(tasks: (() => Promise<void>)[], width: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: width }, lane));
}

let deref: SchemaWalker["deref"];
let jsonTypes: SchemaWalker["jsonTypes"];
let example: SchemaWalker["example"];

/** Real ids the caller owns, by path parameter name. */
const validIds: Record<string, string> = {};
/** An id of the right shape that names nothing. */
const UNKNOWN_ID = "doesnotexist1";

/** Path segments as sent on the wire (already percent-encoded, or deliberately not). */
const BAD_PATH_VALUES: [string, string][] = [
  ["NUL", "%00"],
  ["NUL inside", "ab%00cd"],
  ["lone high surrogate (CESU-8 bytes)", "%ED%A0%80"],
  ["lone low surrogate (CESU-8 bytes)", "x%ED%B0%80"],
  ["truncated UTF-8", "%F0"],
  ["bad percent-encoding", "%zz"],
  ["lone percent", "%"],
  ["%u escape", "%uD800"],
  ["65 characters", "a".repeat(65)],
  ["2000 characters", "a".repeat(2000)],
];

/** Query values as sent on the wire. */
const BAD_QUERY_VALUES: [string, string][] = [
  ["NUL", "%00"],
  ["NUL inside", "ab%00cd"],
  ["lone high surrogate (CESU-8 bytes)", "%ED%A0%80"],
  ["lone low surrogate (CESU-8 bytes)", "%ED%B0%80"],
  ["%u escape", "%uD800"],
  ["bad percent-encoding", "%zz"],
  ["10,000 characters", "x".repeat(10_000)],
];

/** The values of BAD_QUERY_VALUES whose query string does not decode (refused before routing). */
const UNDECODABLE = new Set([
  "lone high surrogate (CESU-8 bytes)",
  "lone low surrogate (CESU-8 bytes)",
  "%u escape",
  "bad percent-encoding",
]);

/** String values PostgreSQL cannot store, or that are far too long, for any body field. */
const BAD_STRINGS: [string, string][] = [
  ["NUL inside", "a\u0000b"],
  ["NUL alone", "\u0000"],
  ["lone high surrogate", "\ud800"],
  ["lone low surrogate", "\udc00"],
  ["lone surrogate inside", "a\ud800b"],
  ["reversed pair", "\udc00\ud800"],
  ["100,000 characters", "x".repeat(100_000)],
];

/** One value of each JSON type; those a field accepts are skipped for it. */
const WRONG_TYPES: unknown[] = [12345, 1.5, true, "walk-wrong-type", { x: 1 }, ["x"], null];

/** Whole bodies that are not a JSON object of the operation's fields. */
const BAD_BODIES: [string, string][] = [
  ["an array", "[]"],
  ["an array of an object", '[{"name":"x"}]'],
  ["a string", '"text"'],
  ["null", "null"],
  ["a number", "42"],
  ["true", "true"],
  ["invalid JSON", "{nope"],
  ["truncated JSON", '{"name":'],
  ["NUL inside a key", '{"a\\u0000": 1}'],
  ["lone surrogate in a key", '{"\\ud800": 1}'],
  ["__proto__ key", '{"__proto__": {"admin": true}}'],
];

interface Sent {
  what: string;
  method: string;
  path: string;
  body?: string;
  reply?: Reply;
  problems: string[];
}

const sent: Sent[] = [];

async function send(what: string, method: string, path: string, body?: string): Promise<Sent> {
  const record: Sent = { what, method, path, body, problems: [] };
  sent.push(record);
  try {
    record.reply = await server.request(method, path, body === undefined ? {} : { body });
  } catch (error) {
    // The harness found the reply does not match the document (or the request failed).
    record.problems.push(error instanceof Error ? error.message : String(error));
    return record;
  }
  const { status, body: json, headers } = record.reply;
  if (status < 400 || status >= 500) record.problems.push(`status ${status}, expected a 4xx`);
  if (!headers.get("content-type")?.startsWith("application/json")) {
    record.problems.push(`content-type ${headers.get("content-type")}, expected application/json`);
  }
  if (
    typeof json?.code !== "string" ||
    typeof json?.error !== "string" ||
    typeof json?.requestId !== "string"
  ) {
    record.problems.push("no { code, error, requestId } envelope");
  } else if (json.requestId !== headers.get("x-request-id")) {
    record.problems.push("requestId differs from x-request-id");
  }
  return record;
}

/**
 * 400 invalid_request with an `errors` entry at `field` (or inside it); `code` when the operation
 * answers with FlowFuse's own (the search's `team`: `bad_request`).
 */
function expectFieldError(record: Sent, field: string, code = "invalid_request") {
  const reply = record.reply;
  if (!reply || record.problems.length > 0) return;
  if (reply.status !== 400 || reply.body.code !== code) {
    record.problems.push(`expected 400 ${code} naming ${JSON.stringify(field)}`);
    return;
  }
  const paths: unknown[] = Array.isArray(reply.body.errors)
    ? reply.body.errors.map((e: { path?: unknown }) => e.path)
    : [];
  const named = paths.some(
    (path) =>
      typeof path === "string" &&
      (path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`)),
  );
  if (!named) record.problems.push(`errors[].path ${JSON.stringify(paths)} does not name ${field}`);
}

function describeRecord(record: Sent): string {
  const body =
    record.body === undefined
      ? ""
      : ` body ${JSON.stringify(record.body.length > 120 ? `${record.body.slice(0, 120)}…` : record.body)}`;
  const path = record.path.length > 160 ? `${record.path.slice(0, 160)}…` : record.path;
  const reply = record.reply
    ? ` → ${record.reply.status} ${record.reply.text.slice(0, 300)}`
    : " → (no reply checked)";
  return `${record.what}: ${record.method} ${path}${body}${reply}\n    ${record.problems.join("\n    ")}`;
}

async function snapshot() {
  const teamId = validIds.teamId!;
  const team = await server.request("GET", `/api/v1/teams/${teamId}`);
  const userTeams = await server.request("GET", "/api/v1/user/teams");
  const allTeams = await server.request("GET", "/api/v1/teams?limit=1000");
  const tokens = await server.request("GET", "/api/v1/user/tokens");
  // lastUsedAt is written by the housekeeping timer: it may move while the walk runs.
  const tokenList = tokens.body.tokens.map(({ lastUsedAt: _, ...rest }: any) => rest);
  const audit = await server.db.selectFrom("audit_log").select("id").execute();
  const user = await server.request("GET", `/api/v1/users/${validIds.userId}`);
  return {
    team: team.body,
    userTeams: userTeams.body,
    allTeams: allTeams.body,
    tokens: tokenList,
    auditEntries: audit.length,
    user: user.body,
  };
}

/** Whether the server saw the request line exactly as it was sent (fetch did not rewrite it). */
function loggedUrls(): Map<string, string> {
  const urls = new Map<string, string>();
  for (const line of server.logs) {
    try {
      const entry = JSON.parse(line);
      if (entry.msg === "request" && typeof entry.reqId === "string") {
        urls.set(entry.reqId, entry.url);
      }
    } catch {
      // not a JSON line
    }
  }
  return urls;
}

test("fetch sends the path and query exactly as written (no normalization)", async () => {
  const seen: string[] = [];
  const echo = createServer((request, response) => {
    seen.push(request.url ?? "");
    response.end();
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  const { port } = echo.address() as AddressInfo;
  try {
    const paths = [
      ...BAD_PATH_VALUES.map(([, value]) => `/api/v1/teams/${value}`),
      ...BAD_QUERY_VALUES.map(([, value]) => `/api/v1/teams?cursor=${value}`),
    ];
    for (const path of paths) await (await fetch(`http://127.0.0.1:${port}${path}`)).text();
    expect(seen).toEqual(paths);
  } finally {
    await new Promise((resolve) => echo.close(resolve));
  }
});

describe("every operation of the document, walked with input PostgreSQL cannot store", () => {
  let originalTeam: { id: string; name: string; slug: string };

  test("answers 4xx in the error envelope, never 5xx, and changes nothing", async () => {
    const team = await server.request("POST", "/api/v1/teams", {
      body: { name: "Walked Team", slug: "walked-team" },
    });
    expect(team.status, team.text).toBe(200);
    originalTeam = team.body;
    const token = await server.request("POST", "/api/v1/user/tokens", {
      body: { name: "walked token" },
    });
    expect(token.status, token.text).toBe(200);
    validIds.teamId = team.body.id;
    validIds.id = token.body.id;
    const other = await server.request("POST", "/api/v1/users", {
      body: { username: "walked-user", name: "Walked", password: "a long enough secret" },
    });
    expect(other.status, other.text).toBe(200);
    validIds.userId = other.body.id;
    validIds.slug = team.body.slug;
    validIds.teamTypeId = DEFAULT_TEAM_TYPE_ID;
    validIds.username = await createBrokerClient(
      server,
      { token: server.adminToken },
      team.body.id,
    );
    const brokerToken = await server.request("POST", "/api/v1/broker/tokens", {
      body: { name: "walked broker" },
    });
    expect(brokerToken.status, brokerToken.text).toBe(201);
    validIds.tokenId = brokerToken.body.id;
    // The catalogue's own, not the seeded defaults: this walk sends DELETEs as an administrator.
    for (const [param, path, body] of [
      ["instanceTypeId", "/api/v1/project-types", { name: "Walked Type" }],
      ["stackId", "/api/v1/stacks", { name: "walked-stack", properties: { nodered: "4.1.15" } }],
      ["templateId", "/api/v1/templates", { name: "Walked Template", settings: {}, policy: {} }],
    ] as const) {
      const created = await server.request("POST", path, { body });
      expect(created.status, created.text).toBe(200);
      validIds[param] = created.body.id;
    }
    validIds.applicationId = await createApplication(
      server,
      { token: server.adminToken },
      team.body.id,
    );
    validIds.instanceId = await createInstance(server, { token: server.adminToken }, team.body.id);
    validIds.snapshotId = await createSnapshot(
      server,
      { token: server.adminToken },
      validIds.instanceId,
    );
    const pipeline = await createPipeline(server, { token: server.adminToken }, team.body.id);
    validIds.pipelineId = pipeline.pipelineId;
    validIds.stageId = pipeline.stageId;
    Object.assign(
      validIds,
      await createWebhookWithDelivery(server, { token: server.adminToken }, team.body.id),
    );
    validIds.operationId = await createOperation(server, { token: server.adminToken }, pipeline);
    validIds.deviceId = await createDevice(server, { token: server.adminToken }, team.body.id);
    const group = await server.request(
      "POST",
      `/api/v1/applications/${validIds.applicationId}/device-groups`,
      { body: { name: "walked group" } },
    );
    expect(group.status, group.text).toBe(201);
    validIds.groupId = group.body.id;
    validIds.rolloutId = (
      await createRollout(server, { token: server.adminToken }, team.body.id)
    ).rolloutId;
    validIds.invitationId = await createInvitation(
      server,
      { id: "", token: server.adminToken, tokenId: "", username: "admin" },
      team.body.id,
      { id: other.body.id, token: "", tokenId: "", username: "walked-user" },
    );
    validIds.notificationId = await createNotification(
      server,
      { id: "", token: server.adminToken, tokenId: "", username: "admin" },
      team.body.id,
    );

    const before = await snapshot();
    sent.length = 0;
    // People's operations; the device agent's take its token or none, and are walked with them
    // in agent-operations.test.ts.
    const operations = Object.entries(server.document.paths).flatMap(([template, methods]) =>
      Object.entries(methods as Record<string, Operation>)
        .filter(([, operation]) => !isAgentOperation(operation))
        .map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })),
    );
    expect(operations.length).toBeGreaterThan(5);
    const walked = new Map<string, number>();

    for (const { template, method, operation } of operations) {
      const name = `${method} ${template}`;
      const startedAt = sent.length;
      const parameters = operation.parameters ?? [];
      const pathNames = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      for (const param of pathNames) {
        expect(
          validIds[param],
          `${name}: path parameter {${param}} has no valid id in validIds; extend the walk with an id the caller owns`,
        ).toBeDefined();
      }
      const pathWith = (override: Record<string, string> = {}) =>
        template.replace(/\{(\w+)\}/g, (_, param: string) => override[param] ?? validIds[param]!);

      const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
      const body = bodySchema ? deref(bodySchema) : undefined;
      // A body that is one of several requests (POST /devices: a creation or a setup): each is
      // walked with a valid body of its own; the first is the operation's valid body.
      const bodyModes = body ? (body.oneOf ?? [body]).map((mode) => deref(mode)) : [];
      const validBodyOf = (mode: typeof body) => {
        const valid = example(mode!, `${name} body`) as Record<string, unknown>;
        // Body fields that name what the caller owns (the team, the application, the instance a
        // snapshot is imported into) get real ids, so that the field under test is the one at
        // fault.
        for (const [field, param] of [
          ["teamId", "teamId"],
          ["team", "teamId"],
          ["applicationId", "applicationId"],
          ["ownerId", "instanceId"],
          // A rollout's snapshot.
          ["snapshotId", "snapshotId"],
          // A pipeline stage's webhook.
          ["webhookId", "hookId"],
        ] as const) {
          if (field in valid) valid[field] = validIds[param];
        }
        // Notifications marked at once: the caller's own.
        if ("ids" in valid) valid.ids = [validIds.notificationId];
        return valid;
      };
      const validBody = body ? validBodyOf(bodyModes[0]) : undefined;
      const validBodyText = validBody ? JSON.stringify(validBody) : undefined;

      // Required query parameters get valid values; the one under test replaces its own.
      const queryParams = parameters.filter((p) => p.in === "query");
      // A required `team` (the search's) names the caller's team, so that the parameter under
      // test is the one at fault.
      const validQuery = (except: string) =>
        queryParams
          .filter((p) => p.required && p.name !== except)
          .map(
            (p) =>
              `${p.name}=${encodeURIComponent(p.name === "team" ? validIds.teamId! : String(example(p.schema ?? {}, p.name)))}`,
          );

      // Path parameters: 400 invalid_request (naming it, when it is decoded and refused) or
      // 404 not_found (unknown, or longer than the router takes).
      // Each case of the operation is queued and sent a few at a time (all are refused, so their
      // order does not matter): on a loaded machine a walk of thousands of requests sent one by
      // one waits on the scheduler between every two of them.
      const cases: (() => Promise<void>)[] = [];
      for (const param of pathNames) {
        for (const [label, value] of BAD_PATH_VALUES)
          cases.push(async () => {
            const record = await send(
              `${name} path {${param}} ${label}`,
              method,
              pathWith({ [param]: value }),
              validBodyText,
            );
            const reply = record.reply;
            if (!reply || record.problems.length > 0) return;
            if (reply.status === 400) {
              if (reply.body.code !== "invalid_request") {
                record.problems.push("400 must be invalid_request");
              } else if (label.startsWith("NUL")) {
                const named =
                  (reply.body.errors ?? []).some((e: any) => e.path === param) ||
                  String(reply.body.error).includes(param);
                if (!named) record.problems.push(`400 does not name ${param}`);
              }
            } else if (reply.status === 404) {
              if (reply.body.code !== "not_found") record.problems.push("404 must be not_found");
            } else {
              record.problems.push("expected 400 invalid_request or 404 not_found");
            }
            if (label === "2000 characters" && reply.status !== 404) {
              record.problems.push("an id beyond the router's maximum parameter length is 404");
            }
          });
        cases.push(async () => {
          const unknown = await send(
            `${name} path {${param}} unknown id`,
            method,
            pathWith({ [param]: UNKNOWN_ID }),
            validBodyText,
          );
          if (unknown.reply && unknown.problems.length === 0) {
            if (unknown.reply.status !== 404 || unknown.reply.body.code !== "not_found") {
              unknown.problems.push("a valid-looking unknown id must be 404 not_found");
            }
          }
        });
      }

      // Query parameters: 400 invalid_request naming the parameter.
      for (const param of queryParams) {
        const schema = deref(param.schema ?? {});
        const valid = encodeURIComponent(String(example(schema, param.name)));
        const values: [string, string][] = [...BAD_QUERY_VALUES];
        // A parameter that takes an array (the audit log's `event`) may repeat; others may not.
        if (!jsonTypes(schema).has("array")) {
          values.push(["repeated", `${valid}&${param.name}=${valid}`]);
        }
        if (schema.type === "integer" || schema.type === "number") {
          values.push(
            ["not a number", "abc"],
            ["10,000 digits", "9".repeat(10_000)],
            ["empty", ""],
            ["object syntax", "%5Bobject%20Object%5D"],
          );
          if (schema.type === "integer") values.push(["fraction", "1.5"]);
        }
        if (schema.type === "boolean") values.push(["not a boolean", "maybe"]);
        for (const [label, value] of values)
          cases.push(async () => {
            const query = [...validQuery(param.name), `${param.name}=${value}`].join("&");
            const record = await send(
              `${name} query ${param.name} ${label}`,
              method,
              `${pathWith()}?${query}`,
              validBodyText,
            );
            // The search answers a bad team as FlowFuse does: 400 `bad_request` naming it (a
            // query string that does not decode is refused before any route, as everywhere).
            const flowFuseCode =
              template.startsWith("/api/v1/search") &&
              param.name === "team" &&
              !UNDECODABLE.has(label);
            expectFieldError(record, param.name, flowFuseCode ? "bad_request" : undefined);
          });
      }

      // Body fields: 400 invalid_request naming the field.
      for (const mode of bodyModes) {
        const modeBody = validBodyOf(mode);
        for (const [field, propertySchema] of Object.entries(mode.properties ?? {})) {
          const property = deref(propertySchema);
          const types = jsonTypes(property);
          const variants: [string, unknown][] = [
            ...BAD_STRINGS.map(([label, value]): [string, unknown] =>
              // A field that may be that long (a library entry's body) is sent one over its bound.
              value.length >= 100_000 && (property.maxLength ?? 0) >= value.length
                ? [`${property.maxLength! + 1} characters`, "x".repeat(property.maxLength! + 1)]
                : [label, value],
            ),
            ...WRONG_TYPES.filter((value) => !accepts(types, value)).map(
              (value): [string, unknown] => [`wrong type ${JSON.stringify(value)}`, value],
            ),
          ];
          if (types.has("array")) {
            const items = property.items ?? {};
            for (const [label, value] of BAD_STRINGS) variants.push([`item ${label}`, [value]]);
            const itemTypes = jsonTypes(items);
            for (const value of WRONG_TYPES.filter((v) => !accepts(itemTypes, v))) {
              variants.push([`item wrong type ${JSON.stringify(value)}`, [value]]);
            }
            if (property.maxItems !== undefined) {
              variants.push([
                `${property.maxItems + 1} items`,
                Array.from({ length: property.maxItems + 1 }, () => example(items, field)),
              ]);
            }
          }
          for (const [label, value] of variants)
            cases.push(async () => {
              // JSON.stringify writes a lone surrogate as the escape `\ud800`, so the server's
              // JSON.parse gives back the same lone surrogate.
              const text = JSON.stringify({ ...modeBody, [field]: value });
              const record = await send(`${name} body ${field} ${label}`, method, pathWith(), text);
              expectFieldError(record, field);
            });
        }
        for (const [label, text] of BAD_BODIES) {
          cases.push(async () => {
            await send(`${name} body ${label}`, method, pathWith(), text);
          });
        }
      }
      await inTurns(cases, 8);
      walked.set(name, sent.length - startedAt);
    }

    // Every operation that takes input was walked.
    for (const { template, method, operation } of operations) {
      const takesInput =
        (operation.parameters?.length ?? 0) > 0 ||
        operation.requestBody !== undefined ||
        template.includes("{");
      if (takesInput) expect(walked.get(`${method} ${template}`), template).toBeGreaterThan(0);
    }

    // Where the server logged the request, it saw the request line as sent.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const urls = loggedUrls();
    for (const record of sent) {
      const id = record.reply?.headers.get("x-request-id");
      if (!id) continue;
      const url = urls.get(id);
      if (url !== undefined && url !== record.path) {
        record.problems.push(`the server saw ${url.slice(0, 100)}, not the path sent`);
      }
    }

    const serverErrors = sent.filter((r) => r.reply && r.reply.status >= 500);
    const failures = sent.filter((r) => r.problems.length > 0);
    // Soft, so that one run reports every kind of failure at once.
    expect.soft(sent.length).toBeGreaterThan(100);
    expect.soft(serverErrors.map(describeRecord), "5xx replies").toEqual([]);
    expect
      .soft(failures.map(describeRecord), `${failures.length} of ${sent.length} failed`)
      .toEqual([]);

    const after = await snapshot();
    expect.soft(after, "data changed during the walk").toEqual(before);
    expect(after.team).toMatchObject({ name: originalTeam.name, slug: originalTeam.slug });
    // Thousands of requests: over 120 s when two suites shared a 2-core machine (load 19). The
    // bound is against a hang; how fast the machine is says nothing of what the walk checks.
  }, 900_000);

  test("a storable value round-trips exactly: emoji, combining marks, RTL, tab, U+FFFF", async () => {
    const teamId = validIds.teamId!;
    const name = "Zoë 🚀 e\u0301 שלום \t \uffff \u202e end";
    const put = await server.request("PUT", `/api/v1/teams/${teamId}`, { body: { name } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.name).toBe(name);
    const read = await server.request("GET", `/api/v1/teams/${teamId}`);
    expect(read.body.name).toBe(name);
    expect(read.body.slug).toBe(originalTeam.slug);
    const mine = await server.request("GET", "/api/v1/user/teams");
    expect(mine.body.teams.find((t: { id: string }) => t.id === teamId)?.name).toBe(name);

    const tokenId = validIds.id!;
    const renamed = await server.request("PUT", `/api/v1/user/tokens/${tokenId}`, {
      body: { name },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const tokens = await server.request("GET", "/api/v1/user/tokens");
    expect(tokens.body.tokens.find((t: { id: string }) => t.id === tokenId)?.name).toBe(name);
  });
});
