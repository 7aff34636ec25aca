import {
  auditEntries,
  DEFAULT_PROJECT_TYPE_ID,
  DEFAULT_STACK_ID,
  DEFAULT_TEMPLATE_ID,
  defaultCatalogue,
  findTemplate,
  newId,
} from "@flowplane/db";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let admin: { id: string; token: string; tokenId: string };
let user: string;
beforeAll(async () => {
  server = await startServer();
  admin = await server.user({ admin: true, scope: { adminOptIn: true } });
  user = (await server.user()).token;
});
afterAll(() => server.close());

type Row = Record<string, any> & { id: string; name: string };

let counter = 0;
const unique = (prefix: string) =>
  `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 6)}`;

async function create(path: string, body: Record<string, unknown>): Promise<Row> {
  const reply = await server.request("POST", path, { token: admin.token, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as Row;
}

const createType = (body: Record<string, unknown> = {}) =>
  create("/api/v1/project-types", { name: unique("Type"), ...body });
const createStack = (body: Record<string, unknown> = {}) =>
  create("/api/v1/stacks", {
    name: unique("stack"),
    properties: { nodered: "4.1.15" },
    ...body,
  });
const createTemplate = (body: Record<string, unknown> = {}) =>
  create("/api/v1/templates", { name: unique("Template"), settings: {}, policy: {}, ...body });

/**
 * An instance using the given catalogue entries (the seeded defaults otherwise), inserted directly:
 * in a new application of a new team. Its id.
 */
async function insertInstance(
  use: { projectType?: string; stack?: string; template?: string } = {},
): Promise<string> {
  const owner = await server.user();
  const team = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: unique("Team") },
  });
  expect(team.status, team.text).toBe(200);
  const application = await server.db
    .insertInto("applications")
    .values({ id: newId(), team_id: team.body.id, name: unique("App"), description: null })
    .returning("id")
    .executeTakeFirstOrThrow();
  const project = await server.db
    .insertInto("projects")
    .values({
      id: randomUUID(),
      name: unique("inst"),
      application_id: application.id,
      team_id: team.body.id,
      project_type_id: use.projectType ?? DEFAULT_PROJECT_TYPE_ID,
      stack_id: use.stack ?? DEFAULT_STACK_ID,
      template_id: use.template ?? DEFAULT_TEMPLATE_ID,
      settings: "{}",
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return project.id;
}

async function removeInstance(id: string) {
  await server.db.deleteFrom("projects").where("id", "=", id).execute();
}

async function auditOf(event: string, key: string, id: string) {
  return (await auditEntries(server.db, { event })).find(
    (e) => (e.body as Record<string, { id: string }>)[key]?.id === id,
  );
}

/** An object nested `depth` deep: `{ x: { x: … 1 } }`. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : { x: nested(depth - 1) });

/** 400 invalid_request with an `errors` entry at `field` (or inside it), for each case. */
async function expectFieldErrors(method: string, path: string, cases: [unknown, string][]) {
  for (const [body, field] of cases) {
    const reply = await server.request(method, path, { token: admin.token, body });
    expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(400);
    expect(reply.body.code, JSON.stringify(body)).toBe("invalid_request");
    const paths: string[] = reply.body.errors.map((e: { path: string }) => e.path);
    expect(
      paths.some((p) => p === field || p.startsWith(`${field}.`)),
      `${JSON.stringify(body)}: ${JSON.stringify(paths)}`,
    ).toBe(true);
  }
}

async function expectForbidden(method: string, path: string, body?: unknown) {
  const plainAdmin = await server.user({ admin: true });
  for (const token of [user, plainAdmin.token]) {
    const reply = await server.request(method, path, { token, ...(body ? { body } : {}) });
    expect(reply.status, `${method} ${path}`).toBe(403);
  }
}

describe("the seeded catalogue", () => {
  test("any signed-in user lists the default instance type, stack and template", async () => {
    const types = await server.request("GET", "/api/v1/project-types", { token: user });
    expect(types.status).toBe(200);
    expect(types.body.count).toBe(types.body.types.length);
    expect(types.body.types).toContainEqual(
      expect.objectContaining({
        id: DEFAULT_PROJECT_TYPE_ID,
        name: "Default",
        active: true,
        order: 0,
        properties: {},
        defaultStack: DEFAULT_STACK_ID,
        instanceCount: 0,
        stackCount: 1,
      }),
    );

    const stacks = await server.request("GET", "/api/v1/stacks", { token: user });
    expect(stacks.status).toBe(200);
    expect(stacks.body.stacks).toContainEqual(
      expect.objectContaining({
        id: DEFAULT_STACK_ID,
        name: "node-red-4.1",
        label: "Node-RED 4.1",
        active: true,
        projectType: DEFAULT_PROJECT_TYPE_ID,
        properties: { nodered: "4.1.15" },
        replacedBy: null,
        instanceCount: 0,
        links: { self: `http://127.0.0.1:3000/api/v1/stacks/${DEFAULT_STACK_ID}` },
      }),
    );

    const templates = await server.request("GET", "/api/v1/templates", { token: user });
    expect(templates.status).toBe(200);
    expect(templates.body.templates).toContainEqual(
      expect.objectContaining({ id: DEFAULT_TEMPLATE_ID, name: "Default", active: true }),
    );
    const template = await server.request("GET", `/api/v1/templates/${DEFAULT_TEMPLATE_ID}`, {
      token: user,
    });
    expect(template.status).toBe(200);
    expect(template.body).toMatchObject({ settings: {}, policy: {}, instanceCount: 0 });
  });

  test("defaultCatalogue gives a new instance the seeded type, its default stack and template", async () => {
    const defaults = await defaultCatalogue(server.db);
    expect(defaults.projectType?.id).toBe(DEFAULT_PROJECT_TYPE_ID);
    expect(defaults.stack?.id).toBe(DEFAULT_STACK_ID);
    expect(defaults.template?.id).toBe(DEFAULT_TEMPLATE_ID);
  });

  test("an instance counts for its type, stack and template", async () => {
    const instance = await insertInstance();
    for (const path of [
      `/api/v1/project-types/${DEFAULT_PROJECT_TYPE_ID}`,
      `/api/v1/stacks/${DEFAULT_STACK_ID}`,
      `/api/v1/templates/${DEFAULT_TEMPLATE_ID}`,
    ]) {
      const reply = await server.request("GET", path, { token: user });
      expect(reply.body.instanceCount, path).toBe(1);
    }
    await removeInstance(instance);
  });
});

describe("/api/v1/project-types", () => {
  test("an administrator creates, reads, changes and deletes a type; each is logged", async () => {
    const properties = { instances: { limit: 3 }, memory: "256Mi", features: ["a", "b"] };
    const created = await server.request("POST", "/api/v1/project-types", {
      token: admin.token,
      body: { name: "Small", description: "For tests", order: 4, properties },
    });
    expect(created.status, created.text).toBe(200);
    const type = created.body;
    expect(type).toMatchObject({
      name: "Small",
      description: "For tests",
      active: true,
      order: 4,
      properties,
      defaultStack: null,
      instanceCount: 0,
      stackCount: 0,
    });
    expect(await auditOf("platform.project-type.created", "projectType", type.id)).toMatchObject({
      entity_type: "platform",
      actor_id: admin.id,
      token_id: admin.tokenId,
      body: { projectType: { id: type.id, name: "Small" } },
    });

    const read = await server.request("GET", `/api/v1/project-types/${type.id}`, { token: user });
    expect(read.body).toEqual(type);

    const stack = await createStack({ projectType: type.id });
    const changed = await server.request("PUT", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
      body: { name: "Smaller", description: null, active: false, defaultStack: stack.id },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      id: type.id,
      name: "Smaller",
      description: null,
      active: false,
      properties,
      defaultStack: stack.id,
      stackCount: 1,
    });
    expect(
      (await auditOf("platform.project-type.updated", "projectType", type.id))?.body,
    ).toMatchObject({
      updates: expect.arrayContaining([
        { key: "name", old: "Small", new: "Smaller" },
        { key: "defaultStack", old: null, new: stack.id },
      ]),
    });

    const refused = await server.request("DELETE", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.error).toMatch(/in use by 1 stack/);

    expect(
      (await server.request("DELETE", `/api/v1/stacks/${stack.id}`, { token: admin.token })).status,
    ).toBe(200);
    const deleted = await server.request("DELETE", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: "okay" });
    const gone = await server.request("GET", `/api/v1/project-types/${type.id}`, { token: user });
    expect(gone.status).toBe(404);
    expect(await auditOf("platform.project-type.deleted", "projectType", type.id)).toBeDefined();
  });

  test("filter picks active (default), inactive or all types; pages go by order with a cursor", async () => {
    const hidden = await createType({ active: false, order: 3 });
    const shown = await createType({ order: 2 });
    const names = async (query: string) => {
      const reply = await server.request("GET", `/api/v1/project-types${query}`, { token: user });
      expect(reply.status, query).toBe(200);
      expect(reply.body.count, query).toBe(reply.body.types.length);
      return reply.body.types.map((t: Row) => t.name) as string[];
    };
    expect(await names("")).toContain(shown.name);
    expect(await names("")).not.toContain(hidden.name);
    expect(await names("?filter=inactive")).toEqual(expect.arrayContaining([hidden.name]));
    expect(await names("?filter=inactive")).not.toContain(shown.name);
    const all = await names("?filter=all");
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await server.request(
        "GET",
        `/api/v1/project-types?filter=all&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        { token: user },
      );
      expect(reply.body.count).toBe(all.length);
      expect(reply.body.types).toHaveLength(1);
      paged.push(reply.body.types[0].name);
      cursor = reply.body.meta.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all);
  });

  test("a name taken in any case is 409 invalid_name, on create and on change", async () => {
    const taken = await createType();
    const other = await createType();
    const clash = await server.request("POST", "/api/v1/project-types", {
      token: admin.token,
      body: { name: ` ${taken.name.toUpperCase()} ` },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_name");
    expect(clash.body.errors).toEqual([{ path: "name", message: "Already in use" }]);
    const rename = await server.request("PUT", `/api/v1/project-types/${other.id}`, {
      token: admin.token,
      body: { name: taken.name.toLowerCase() },
    });
    expect(rename.status).toBe(409);
    expect(rename.body.code).toBe("invalid_name");
  });

  test("bad input is 400 naming the field; a bad default stack is 400 invalid_stack", async () => {
    await expectFieldErrors("POST", "/api/v1/project-types", [
      [{}, "name"],
      [{ name: " " }, "name"],
      [{ name: "ok", order: -1 }, "order"],
      [{ name: "ok", active: "yes" }, "active"],
      [{ name: "ok", description: "d".repeat(1025) }, "description"],
      [{ name: "ok", properties: [] }, "properties"],
      [{ name: "ok", properties: { a: "x\u0000y" } }, "properties.a"],
      [{ name: "ok", properties: nested(9) }, `properties${".x".repeat(8)}`],
      [{ name: "ok", properties: { big: "x".repeat(70_000) } }, "properties"],
      [{ name: "ok", extra: 1 }, "extra"],
      [{ name: "ok", defaultStack: "not an id" }, "defaultStack"],
    ]);
    const type = await createType();
    await expectFieldErrors("PUT", `/api/v1/project-types/${type.id}`, [
      [{}, ""],
      [{ order: 1.5 }, "order"],
    ]);

    const unknown = await server.request("POST", "/api/v1/project-types", {
      token: admin.token,
      body: { name: unique("Type"), defaultStack: "AAAAAAAAAAAA" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("invalid_stack");
    expect(unknown.body.errors).toEqual([{ path: "defaultStack", message: "No such stack" }]);
    // A stack of another type cannot be this one's default.
    const foreign = await server.request("PUT", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
      body: { defaultStack: DEFAULT_STACK_ID },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe("invalid_stack");
    const missing = await server.request("PUT", "/api/v1/project-types/AAAAAAAAAAAA", {
      token: admin.token,
      body: { name: "Ghost" },
    });
    expect(missing.status).toBe(404);
  });

  test("a type an instance has cannot be deleted (400 invalid_request); unused again, it can", async () => {
    const type = await createType();
    const instance = await insertInstance({ projectType: type.id });
    const refused = await server.request("DELETE", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.error).toMatch(/in use by 1 instance/);
    const read = await server.request("GET", `/api/v1/project-types/${type.id}`, { token: user });
    expect(read.body.instanceCount).toBe(1);
    await removeInstance(instance);
    const deleted = await server.request("DELETE", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
  });

  test("plain users and admins without opt-in get 403 on writes; nothing changes", async () => {
    const type = await createType();
    await expectForbidden("POST", "/api/v1/project-types", { name: "Forbidden" });
    await expectForbidden("PUT", `/api/v1/project-types/${type.id}`, { name: "Forbidden" });
    await expectForbidden("DELETE", `/api/v1/project-types/${type.id}`);
    const read = await server.request("GET", `/api/v1/project-types/${type.id}`, { token: user });
    expect(read.body.name).toBe(type.name);
    const all = await server.request("GET", "/api/v1/project-types?filter=all", { token: user });
    expect(all.body.types.map((t: Row) => t.name)).not.toContain("Forbidden");
  });
});

describe("/api/v1/stacks", () => {
  test("an administrator creates, reads, changes and deletes a stack; each is logged", async () => {
    const type = await createType();
    const created = await server.request("POST", "/api/v1/stacks", {
      token: admin.token,
      body: {
        name: "node-red-4.0",
        label: "Node-RED 4.0",
        projectType: type.id,
        properties: { nodered: "4.0.9", memory: 256 },
      },
    });
    expect(created.status, created.text).toBe(200);
    const stack = created.body;
    expect(stack).toMatchObject({
      name: "node-red-4.0",
      label: "Node-RED 4.0",
      active: true,
      projectType: type.id,
      properties: { nodered: "4.0.9", memory: 256 },
      replacedBy: null,
      instanceCount: 0,
      links: { self: `http://127.0.0.1:3000/api/v1/stacks/${stack.id}` },
    });
    expect(await auditOf("platform.stack.created", "stack", stack.id)).toMatchObject({
      entity_type: "platform",
      actor_id: admin.id,
      body: { stack: { id: stack.id, name: "node-red-4.0" } },
    });
    const read = await server.request("GET", `/api/v1/stacks/${stack.id}`, { token: user });
    expect(read.body).toEqual(stack);

    const changed = await server.request("PUT", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
      body: { label: null, properties: { nodered: "4.0.10" }, projectType: null },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      label: null,
      properties: { nodered: "4.0.10" },
      projectType: null,
    });
    expect((await auditOf("platform.stack.updated", "stack", stack.id))?.body).toMatchObject({
      updates: expect.arrayContaining([{ key: "projectType", old: type.id, new: null }]),
    });

    const deleted = await server.request("DELETE", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
    expect(
      (await server.request("GET", `/api/v1/stacks/${stack.id}`, { token: user })).status,
    ).toBe(404);
    expect(await auditOf("platform.stack.deleted", "stack", stack.id)).toBeDefined();
  });

  test("replaces: the old stack becomes inactive with replacedBy, and its types get the new default", async () => {
    const type = await createType();
    const old = await createStack({ projectType: type.id });
    await server.request("PUT", `/api/v1/project-types/${type.id}`, {
      token: admin.token,
      body: { defaultStack: old.id },
    });
    const next = await createStack({ properties: { nodered: "4.1.16" }, replaces: old.id });
    // It takes the replaced stack's type.
    expect(next).toMatchObject({ active: true, projectType: type.id, replacedBy: null });
    const before = await server.request("GET", `/api/v1/stacks/${old.id}`, { token: user });
    expect(before.body).toMatchObject({ active: false, replacedBy: next.id });
    const typeNow = await server.request("GET", `/api/v1/project-types/${type.id}`, {
      token: user,
    });
    expect(typeNow.body.defaultStack).toBe(next.id);
    expect((await auditOf("platform.stack.created", "stack", next.id))?.body).toMatchObject({
      replaces: { id: old.id },
    });

    // Inactive now: listed only with filter inactive or all; projectType keeps the type's stacks.
    const names = async (query: string) =>
      (await server.request("GET", `/api/v1/stacks${query}`, { token: user })).body.stacks.map(
        (s: Row) => s.id,
      );
    expect(await names("")).not.toContain(old.id);
    expect(await names("?filter=inactive")).toContain(old.id);
    expect((await names(`?filter=all&projectType=${type.id}`)).sort()).toEqual(
      [old.id, next.id].sort(),
    );
    expect(await names(`?projectType=${type.id}`)).toEqual([next.id]);

    const again = await server.request("POST", "/api/v1/stacks", {
      token: admin.token,
      body: { name: unique("stack"), properties: { nodered: "4.1.17" }, replaces: old.id },
    });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("invalid_stack");
  });

  test("an unknown replaces or projectType is 400 invalid_stack naming it", async () => {
    for (const field of ["replaces", "projectType"]) {
      const reply = await server.request("POST", "/api/v1/stacks", {
        token: admin.token,
        body: { name: unique("stack"), properties: { nodered: "4.1.15" }, [field]: "AAAAAAAAAAAA" },
      });
      expect(reply.status, field).toBe(400);
      expect(reply.body.code, field).toBe("invalid_stack");
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toEqual([field]);
    }
    const stack = await createStack();
    const put = await server.request("PUT", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
      body: { projectType: "AAAAAAAAAAAA" },
    });
    expect(put.status).toBe(400);
    expect(put.body.code).toBe("invalid_stack");
  });

  test("bad input is 400 naming the field: a name of lower-case letters, a Node-RED version", async () => {
    await expectFieldErrors("POST", "/api/v1/stacks", [
      [{ properties: { nodered: "4.1.15" } }, "name"],
      [{ name: "Upper", properties: { nodered: "4.1.15" } }, "name"],
      [{ name: "with space", properties: { nodered: "4.1.15" } }, "name"],
      [{ name: "ok" }, "properties"],
      [{ name: "ok", properties: {} }, "properties.nodered"],
      [{ name: "ok", properties: { nodered: "latest" } }, "properties.nodered"],
      [{ name: "ok", properties: { nodered: "4.1" } }, "properties.nodered"],
      [{ name: "ok", properties: { nodered: 4 } }, "properties.nodered"],
      [{ name: "ok", properties: { nodered: "4.1.15", x: "\ud800" } }, "properties.x"],
      [{ name: "ok", properties: { nodered: "4.1.15" }, label: "" }, "label"],
      [{ name: "ok", properties: { nodered: "4.1.15" }, replaces: "" }, "replaces"],
    ]);
  });

  test("a taken name is 409 invalid_name", async () => {
    const stack = await createStack();
    const clash = await server.request("POST", "/api/v1/stacks", {
      token: admin.token,
      body: { name: "node-red-4.1", properties: { nodered: "4.1.15" } },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_name");
    const rename = await server.request("PUT", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
      body: { name: "node-red-4.1" },
    });
    expect(rename.status).toBe(409);
  });

  test("a stack an instance runs can be neither deleted nor given new properties; unused, it can", async () => {
    const stack = await createStack();
    const instance = await insertInstance({ stack: stack.id });
    const refused = await server.request("DELETE", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.error).toMatch(/in use by 1 instance/);
    const change = await server.request("PUT", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
      body: { properties: { nodered: "5.0.0" } },
    });
    expect(change.status).toBe(400);
    // Other fields may change.
    const deactivate = await server.request("PUT", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
      body: { active: false, properties: stack.properties },
    });
    expect(deactivate.status, deactivate.text).toBe(200);
    expect(deactivate.body).toMatchObject({ active: false, instanceCount: 1 });
    await removeInstance(instance);
    const deleted = await server.request("DELETE", `/api/v1/stacks/${stack.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
  });

  test("plain users and admins without opt-in get 403 on writes", async () => {
    const stack = await createStack();
    await expectForbidden("POST", "/api/v1/stacks", {
      name: "forbidden",
      properties: { nodered: "4.1.15" },
    });
    await expectForbidden("PUT", `/api/v1/stacks/${stack.id}`, { active: false });
    await expectForbidden("DELETE", `/api/v1/stacks/${stack.id}`);
    const read = await server.request("GET", `/api/v1/stacks/${stack.id}`, { token: user });
    expect(read.body.active).toBe(true);
  });
});

describe("/api/v1/templates", () => {
  test("an administrator creates, reads, changes and deletes a template; hidden values never show", async () => {
    const settings = {
      env: [
        { name: "GREETING", value: "hello", hidden: false },
        { name: "API_KEY", value: "s3cret", hidden: true },
      ],
      httpAdminRoot: "/admin",
    };
    const policy = { env: true, httpAdminRoot: false, palette: { allowInstall: true } };
    const created = await server.request("POST", "/api/v1/templates", {
      token: admin.token,
      body: { name: "Locked", description: "No palette", settings, policy },
    });
    expect(created.status, created.text).toBe(200);
    const template = created.body;
    expect(template).toMatchObject({
      name: "Locked",
      description: "No palette",
      active: true,
      instanceCount: 0,
      policy,
      settings: {
        httpAdminRoot: "/admin",
        env: [
          { name: "GREETING", value: "hello", hidden: false },
          { name: "API_KEY", value: "", hidden: true },
        ],
      },
      links: { self: `http://127.0.0.1:3000/api/v1/templates/${template.id}` },
    });
    expect((await findTemplate(server.db, template.id))?.settings).toEqual(settings);
    expect(await auditOf("platform.template.created", "template", template.id)).toMatchObject({
      entity_type: "platform",
      actor_id: admin.id,
      body: { template: { id: template.id, name: "Locked" } },
    });
    const listed = await server.request("GET", "/api/v1/templates", { token: user });
    expect(listed.body.templates).toContainEqual(
      expect.objectContaining({ id: template.id, name: "Locked" }),
    );
    expect(listed.body.templates[0]).not.toHaveProperty("settings");

    // A hidden variable sent back blank keeps its value; the log does not show settings.
    const changed = await server.request("PUT", `/api/v1/templates/${template.id}`, {
      token: admin.token,
      body: {
        active: false,
        settings: {
          env: [
            { name: "GREETING", value: "hi", hidden: false },
            { name: "API_KEY", value: "", hidden: true },
          ],
        },
      },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ active: false, policy });
    expect((await findTemplate(server.db, template.id))?.settings).toEqual({
      env: [
        { name: "GREETING", value: "hi", hidden: false },
        { name: "API_KEY", value: "s3cret", hidden: true },
      ],
    });
    const updated = await auditOf("platform.template.updated", "template", template.id);
    expect(updated?.body).toMatchObject({
      updates: expect.arrayContaining([{ key: "settings" }]),
    });
    expect(JSON.stringify(updated?.body)).not.toContain("s3cret");

    const deleted = await server.request("DELETE", `/api/v1/templates/${template.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
    expect(
      (await server.request("GET", `/api/v1/templates/${template.id}`, { token: user })).status,
    ).toBe(404);
    expect(await auditOf("platform.template.deleted", "template", template.id)).toBeDefined();
  });

  test("bad input is 400 naming the field: env names, FF_ variables, required settings and policy", async () => {
    const env = (name: string) => ({ settings: { env: [{ name, value: "v" }] } });
    await expectFieldErrors("POST", "/api/v1/templates", [
      [{ settings: {}, policy: {} }, "name"],
      [{ name: "ok", policy: {} }, "settings"],
      [{ name: "ok", settings: {} }, "policy"],
      [{ name: "ok", policy: {}, ...env("1ABC") }, "settings.env.0.name"],
      [{ name: "ok", policy: {}, ...env("with-dash") }, "settings.env.0.name"],
      [{ name: "ok", policy: {}, ...env("FF_PROJECT_ID") }, "settings.env.0.name"],
      [{ name: "ok", policy: {}, settings: { env: [{ name: "A" }] } }, "settings.env.0.value"],
      [
        {
          name: "ok",
          policy: {},
          settings: {
            env: [
              { name: "A", value: "1" },
              { name: "A", value: "2" },
            ],
          },
        },
        "settings.env.1.name",
      ],
      [{ name: "ok", policy: {}, settings: { env: "x" } }, "settings.env"],
      [{ name: "ok", settings: {}, policy: [] }, "policy"],
      [{ name: "ok", settings: {}, policy: { "a\u0000": true } }, "policy"],
    ]);
  });

  test("a name taken in any case is 409 invalid_name", async () => {
    const template = await createTemplate();
    const clash = await server.request("POST", "/api/v1/templates", {
      token: admin.token,
      body: { name: "DEFAULT", settings: {}, policy: {} },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_name");
    const rename = await server.request("PUT", `/api/v1/templates/${template.id}`, {
      token: admin.token,
      body: { name: "default" },
    });
    expect(rename.status).toBe(409);
  });

  test("a template an instance was made from cannot be deleted; unused again, it can", async () => {
    const template = await createTemplate();
    const instance = await insertInstance({ template: template.id });
    const refused = await server.request("DELETE", `/api/v1/templates/${template.id}`, {
      token: admin.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.error).toMatch(/in use by 1 instance/);
    await removeInstance(instance);
    const deleted = await server.request("DELETE", `/api/v1/templates/${template.id}`, {
      token: admin.token,
    });
    expect(deleted.status).toBe(200);
  });

  test("plain users and admins without opt-in get 403 on writes", async () => {
    const template = await createTemplate();
    await expectForbidden("POST", "/api/v1/templates", {
      name: "Forbidden",
      settings: {},
      policy: {},
    });
    await expectForbidden("PUT", `/api/v1/templates/${template.id}`, { active: false });
    await expectForbidden("DELETE", `/api/v1/templates/${template.id}`);
    const read = await server.request("GET", `/api/v1/templates/${template.id}`, { token: user });
    expect(read.body.active).toBe(true);
  });
});
