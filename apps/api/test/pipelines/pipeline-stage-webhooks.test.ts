// A pipeline stage's webhook (docs/webhooks.md, "A pipeline stage's hook"): a receiver on
// 127.0.0.1 named by an instance stage gets the signed outcome of a deploy into it that succeeds
// and of one that fails (the target does not start again), once each though the hook
// also subscribes to `stage-deployed`; the failed deploy is audited once with its reason. A hook
// of another team, or none, is 400 naming `webhookId`; null clears it.
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { InstanceSpec } from "@flowplane/runtime";
import { startServer, type TestServer } from "../support/harness";
import { InMemoryDriver } from "../support/in-memory-driver";
import { awaitOperation, createApplication } from "../support/team-fixtures";
import { type Person, teamOfRoles } from "../support/team-of-roles";
import { waiter } from "../support/until";
import { documentedVerify, type Receiver, startReceiver } from "../webhooks/receiver";

const until = waiter(20_000, 50);
const FAST = { tickMs: 100, backoffMs: 50, timeoutMs: 10_000 };
const DEPLOYED = "application.pipeline.stage-deployed";
const FAILED = "application.pipeline.stage-deploy-failed";

/** The in-memory driver, but the instances named here do not start. */
class FailingDriver extends InMemoryDriver {
  readonly failing = new Set<string>();
  override async start(spec: InstanceSpec) {
    if (this.failing.has(spec.id)) throw new Error("Node-RED did not start");
    return super.start(spec);
  }
  override async restart(spec: InstanceSpec) {
    if (this.failing.has(spec.id)) throw new Error("Node-RED did not start");
    return super.restart(spec);
  }
}
const driver = new FailingDriver();

let server: TestServer;
let receiver: Receiver;
let owner: Person;
let teamId: string;
beforeAll(async () => {
  server = await startServer({
    instances: "in-memory",
    inMemoryDriver: driver,
    webhookAllowedHosts: ["127.0.0.1"],
    webhookDelivery: FAST,
  });
  receiver = await startReceiver();
  ({ teamId, owner } = await teamOfRoles(server, "Stage hooks"));
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function createHook(
  token: string,
  team: string,
  eventTypes: string[] = ["team.settings.updated"],
) {
  const reply = await server.request("POST", `/api/v1/teams/${team}/webhooks`, {
    token,
    body: { url: receiver.url, eventTypes },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { id: string; secret: string };
}

async function deliveriesOf(hookId: string) {
  const path = `/api/v1/teams/${teamId}/webhooks/${hookId}/deliveries`;
  const reply = await server.request("GET", path, { token: owner.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.deliveries as { event: { type: string } }[];
}

async function post(path: string, body: Record<string, unknown>) {
  const reply = await server.request("POST", path, { token: owner.token, body });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** An application with two instances (dev and prod) and a pipeline of it. */
async function fixture() {
  const applicationId = await createApplication(server, owner, teamId);
  const instance = async (name: string) =>
    (
      await post("/api/v1/projects", {
        name: `${name}-${Math.random().toString(36).slice(2, 7)}`,
        applicationId,
      })
    ).id as string;
  const dev = await instance("dev");
  const prod = await instance("prod");
  const pipeline = await post("/api/v1/pipelines", { applicationId, name: "to prod" });
  return { dev, prod, pipeline };
}

describe("a pipeline stage's webhook", () => {
  test("gets the signed outcome of each deploy into the stage, succeeded and failed, once each", async () => {
    const { dev, prod, pipeline } = await fixture();
    const hook = await createHook(owner.token, teamId, [DEPLOYED]);
    const first = await post(`/api/v1/pipelines/${pipeline.id}/stages`, {
      name: "dev",
      instanceId: dev,
    });
    const last = await post(`/api/v1/pipelines/${pipeline.id}/stages`, {
      name: "prod",
      source: first.id,
      instanceId: prod,
      webhookId: hook.id,
    });
    expect(last.webhookId).toBe(hook.id);
    expect(first.webhookId).toBeNull();

    const deploy = () =>
      server.request("PUT", `/api/v1/pipelines/${pipeline.id}/stages/${first.id}/deploy`, {
        token: owner.token,
        body: {},
      });
    const ok = await deploy();
    expect(ok.status, ok.text).toBe(200);
    expect((await awaitOperation(server, owner, ok.body.operation.id)).status).toBe("succeeded");

    // The target no longer starts: the deploy fails as it runs.
    driver.failing.add(prod);
    const bad = await deploy();
    expect(bad.status, bad.text).toBe(200);
    const failed = await awaitOperation(server, owner, bad.body.operation.id);
    expect(failed.status).toBe("failed");

    const verify = await documentedVerify();
    const outcomes = await until("both outcomes delivered", async () => {
      const got = receiver.received
        .map((r) => ({ r, body: JSON.parse(r.body) }))
        .filter(({ body }) => body.data?.targetStage?.id === last.id);
      return got.length >= 2 ? got : undefined;
    });
    expect(outcomes.map(({ body }) => body.type)).toEqual([DEPLOYED, FAILED]);
    for (const { r } of outcomes) {
      expect(verify(r.body, String(r.headers["flowplane-signature"]), hook.secret)).toBe(true);
    }
    const failure = outcomes[1]!.body;
    expect(failure.data.reason).toBe(failed.error?.error);
    expect(failure.data.pipeline).toEqual({ id: pipeline.id, name: "to prod" });

    // Once each: the hook hears stage-deployed by its types too, yet has one delivery of it.
    const log = await deliveriesOf(hook.id);
    expect(log.filter((d) => d.event.type === DEPLOYED)).toHaveLength(1);
    expect(log.filter((d) => d.event.type === FAILED)).toHaveLength(1);
    // The failed deploy is in the audit log once.
    const entries = await auditEntries(server.db, { event: FAILED });
    const ofDeploy = entries.filter((e) => JSON.stringify(e).includes(bad.body.operation.id));
    expect(ofDeploy).toHaveLength(1);
  }, 60_000);

  test("a hook of another team or none is 400 naming webhookId; null clears it", async () => {
    const other = await teamOfRoles(server, "Elsewhere");
    const foreign = await createHook(other.owner.token, other.teamId);
    const { dev, pipeline } = await fixture();
    const path = `/api/v1/pipelines/${pipeline.id}/stages`;
    for (const webhookId of [foreign.id, "no-such-hook"]) {
      const refused = await server.request("POST", path, {
        token: owner.token,
        body: { name: "dev", instanceId: dev, webhookId },
      });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.errors[0].path).toBe("webhookId");
    }
    const own = await createHook(owner.token, teamId);
    const stage = await post(path, {
      name: "dev",
      instanceId: dev,
      webhookId: own.id,
    });
    const update = (webhookId: string | null) =>
      server.request("PUT", `${path}/${stage.id}`, { token: owner.token, body: { webhookId } });
    const moved = await update(foreign.id);
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body.errors[0].path).toBe("webhookId");
    const cleared = await update(null);
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.webhookId).toBeNull();
  });
});
