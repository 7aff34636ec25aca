// A pipeline of two real hosted instances, end to end: an owner deploys the first stage; the
// operation is awaited; the second instance serves the new flow, whose credentials (re-encrypted
// for it) work, and keeps its own variables' values while gaining the new ones. Members and viewers
// cannot deploy, another team gets 404; the last stage is refused without a snapshot; concurrent
// deploys run one after the other; a deploy the target cannot start on leaves it as it was.
import { auditEntries } from "@flowplane/db";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployFlows, startServer, type TestServer } from "../support/harness";
import { awaitOperation, createApplication } from "../support/team-fixtures";
import { waiter } from "../support/until";
import { type Person, teamOfRoles } from "../support/team-of-roles";

let server: TestServer;
/** The team's owner, a member and a viewer of it, and a user of no team of it (teamOfRoles). */
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let dev: string;
let prod: string;
let pipelineId: string;
let devStage: string;
let prodStage: string;

const AUTH = `Basic ${Buffer.from("alice:s3cret").toString("base64")}`;

/**
 * A server of the test's on the host's loopback, answering GET /echo with the request's
 * Authorization header: instances reach it at the same port of their own 127.0.0.1 (forwarded
 * into their network, as the platform's broker is), as nothing else of the host's loopback.
 */
let echo: Server;
let echoPort: number;

/** GET /check calls the test's /echo with basic-auth credentials, which /echo answers. */
const flowSaying = (word: string) => [
  { id: "tab1", type: "tab", label: "Flow" },
  { id: "in1", type: "http in", z: "tab1", url: "/check", method: "get", wires: [["fn1"]] },
  {
    id: "fn1",
    type: "function",
    z: "tab1",
    func: `msg.url = "http://127.0.0.1:${echoPort}/echo"; return msg;`,
    outputs: 1,
    wires: [["req1"]],
  },
  {
    id: "req1",
    type: "http request",
    z: "tab1",
    method: "GET",
    ret: "txt",
    url: "",
    authType: "basic",
    credentials: { user: "alice", password: "s3cret" },
    wires: [["out1"]],
  },
  { id: "out1", type: "http response", z: "tab1", wires: [] },
  { id: "in3", type: "http in", z: "tab1", url: "/word", method: "get", wires: [["fn3"]] },
  {
    id: "fn3",
    type: "function",
    z: "tab1",
    func: `msg.payload = "${word} " + env.get("GREETING") + " " + (env.get("NEW_VAR") || "-"); return msg;`,
    outputs: 1,
    wires: [["out3"]],
  },
  { id: "out3", type: "http response", z: "tab1", wires: [] },
];

const until = waiter(90_000);

async function running(id: string): Promise<string> {
  return until(`instance ${id} running`, async () => {
    const reply = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
    return reply.body.meta.state === "running" ? (reply.body.url as string) : undefined;
  });
}

async function get(id: string, path: string): Promise<string | undefined> {
  const response = await fetch(`${await running(id)}${path}`).catch(() => undefined);
  return response?.status === 200 ? response.text() : undefined;
}

const setEnv = (id: string, env: { name: string; value: string }[]) =>
  server.request("PUT", `/api/v1/projects/${id}`, {
    token: owner.token,
    body: { settings: { env } },
  });

const snapshotCount = async (id: string) =>
  (await server.request("GET", `/api/v1/projects/${id}/snapshots`, { token: owner.token })).body
    .count as number;

const deploy = (token: string, stageId = devStage, body: unknown = {}) =>
  server.request("PUT", `/api/v1/pipelines/${pipelineId}/stages/${stageId}/deploy`, {
    token,
    body,
  });

beforeAll(async () => {
  echo = createServer((request, response) => {
    response.writeHead(request.url === "/echo" ? 200 : 404, { "content-type": "text/plain" });
    response.end(request.url === "/echo" ? (request.headers.authorization ?? "none") : "");
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoPort = (echo.address() as AddressInfo).port;
  server = await startServer({ instances: true, instanceHostPorts: [echoPort] });
  ({ teamId, owner, member, viewer, outsider } = await teamOfRoles(server, "Pipeline team"));
  const applicationId = await createApplication(server, owner, teamId);
  const make = async (name: string) =>
    (
      await server.request("POST", "/api/v1/projects", {
        token: owner.token,
        body: { name, applicationId },
      })
    ).body.id as string;
  dev = await make("pipe-dev");
  prod = await make("pipe-prod");
  await Promise.all([running(dev), running(prod)]);
  // Each with its own value of GREETING; dev also has NEW_VAR. Variables reach Node-RED at start.
  await setEnv(dev, [
    { name: "GREETING", value: "dev-value" },
    { name: "NEW_VAR", value: "from-dev" },
  ]);
  await setEnv(prod, [{ name: "GREETING", value: "prod-value" }]);
  for (const id of [dev, prod]) {
    await server.request("POST", `/api/v1/projects/${id}/actions/restart`, { token: owner.token });
  }
  const created = await server.request("POST", "/api/v1/pipelines", {
    token: owner.token,
    body: { applicationId, name: "Release" },
  });
  pipelineId = created.body.id;
  const stage = (body: Record<string, unknown>) =>
    server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
      token: owner.token,
      body,
    });
  devStage = (await stage({ name: "Development", instanceId: dev })).body.id;
  prodStage = (await stage({ name: "Production", instanceId: prod, source: devStage })).body.id;

  // A flow deployed on dev through its editor's admin API, credentials and all.
  await running(dev);
  const deployed = await deployFlows(server, dev, member.token, flowSaying("first"));
  expect(deployed.status).toBe(204);
  expect(await until("dev's flow", () => get(dev, "/check"))).toBe(AUTH);
}, 240_000);

afterAll(async () => {
  await server?.close();
  if (!echo) return;
  echo.closeAllConnections();
  await new Promise((resolve) => echo.close(resolve));
});

describe("deploying a stage", { timeout: 180_000 }, () => {
  it("copies the stage's new snapshot to the next instance, which runs it with working credentials", async () => {
    const started = await deploy(owner.token);
    expect(started.status, started.text).toBe(200);
    expect(started.body).toMatchObject({
      status: "importing",
      operation: { id: expect.any(String), status: "pending", kind: "pipeline.deploy" },
    });
    const done = await awaitOperation(server, viewer, started.body.operation.id, 120_000);
    expect(done).toMatchObject({ status: "succeeded", error: null });

    expect(await until("prod's new flow", () => get(prod, "/check"))).toBe(AUTH);
    // prod keeps its own GREETING and gains NEW_VAR.
    expect(await get(prod, "/word")).toBe("first prod-value from-dev");
    expect(await snapshotCount(prod)).toBe(1);
    expect(await snapshotCount(dev)).toBe(1);
    const deployed = await auditEntries(server.db, {
      event: "application.pipeline.stage-deployed",
    });
    expect(deployed.at(-1)?.body).toMatchObject({
      pipeline: { id: pipelineId },
      sourceStage: { id: devStage },
      targetStage: { id: prodStage },
    });
    const imported = await auditEntries(server.db, { event: "project.snapshot.imported" });
    expect(imported.at(-1)?.entity_id).toBe(prod);
  });

  it("is for owners: members and viewers get 403, another team 404", async () => {
    expect((await deploy(member.token)).status).toBe(403);
    expect((await deploy(viewer.token)).status).toBe(403);
    expect((await deploy(outsider.token)).status).toBe(404);
    const operations = await auditEntries(server.db, {
      event: "application.pipeline.stage-deployed",
    });
    expect(operations.length).toBe(1);
  });

  it("refuses the last stage with FlowFuse's 404, taking no snapshot", async () => {
    const before = await snapshotCount(prod);
    const last = await deploy(owner.token, prodStage);
    expect(last.status).toBe(404);
    expect(last.body).toMatchObject({ code: "not_found", error: "Target stage not found" });
    expect(await snapshotCount(prod)).toBe(before);
  });

  it("runs concurrent deploys to one instance one after the other", async () => {
    const [a, b] = await Promise.all([deploy(owner.token), deploy(owner.token)]);
    expect(a.body.status).toBe("importing");
    expect(b.body.status).toBe("importing");
    const outcomes = await Promise.all(
      [a, b].map((reply) => awaitOperation(server, owner, reply.body.operation.id, 150_000)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(["succeeded", "succeeded"]);
    expect(await until("prod's flow", () => get(prod, "/check"))).toBe(AUTH);
    // The two deploys restarted prod one after the other: two restarts logged, no overlap.
    const restarts = (
      await auditEntries(server.db, { event: "application.pipeline.stage-deployed" })
    ).length;
    expect(restarts).toBe(3);
  });

  it("leaves the target running what it ran when it cannot start on the snapshot", async () => {
    // dev gains a variable that stops Node.js from starting (dev itself has not restarted on it).
    await setEnv(dev, [
      { name: "GREETING", value: "dev-value" },
      { name: "NEW_VAR", value: "from-dev" },
      { name: "NODE_OPTIONS", value: "--require /nonexistent/flowplane-breaks-start.js" },
    ]);
    const before = await server.request("GET", `/api/v1/projects/${prod}`, { token: owner.token });
    const started = await deploy(owner.token);
    const failed = await awaitOperation(server, owner, started.body.operation.id, 150_000);
    expect(failed.status).toBe("failed");
    expect(failed.error?.error).toMatch(/runs what it ran before/);
    expect(await until("prod running again", () => get(prod, "/word"))).toBe(
      "first prod-value from-dev",
    );
    const after = await server.request("GET", `/api/v1/projects/${prod}`, { token: owner.token });
    expect(after.body.settings.env).toEqual(before.body.settings.env);
    expect(await get(prod, "/check")).toBe(AUTH);
  });

  it("does nothing for a stage whose action is none", async () => {
    await server.request("PUT", `/api/v1/pipelines/${pipelineId}/stages/${devStage}`, {
      token: owner.token,
      body: { action: "none" },
    });
    const reply = await deploy(owner.token);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
  });
});
