// `flowplane devices logs|restart|suspend|start` as a user runs them, against the real server with
// its embedded broker and a device whose agent speaks the real one's MQTT protocol (the API's
// SimulatedAgent): the recent lines printed, new ones followed as the agent publishes them, and
// the agent asked to restart its Node-RED.
import { SimulatedAgent } from "@flowplane/api/testing/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let agent: SimulatedAgent;

serveWithAdmin((served) => ({ server, admin } = served), { broker: true });

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.adminToken}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as Record<string, any>;
}

beforeAll(async () => {
  const team = await api("POST", "/api/v1/teams", { name: "Live" });
  const device = await api("POST", "/api/v1/devices", { name: "press-1", team: team.id });
  agent = await SimulatedAgent.connect(device.credentials.broker);
  await agent.publishStatus({ state: "running" });
});
afterAll(async () => {
  await agent?.end();
});

describe("flowplane devices logs", { timeout: 60_000 }, () => {
  it("follows the log as the agent publishes it, as `<time> [<level>] <msg>`", async () => {
    const following = admin.start(
      ...["devices", "logs", "press-1", "--team", "live", "--follow", "--max-lines", "3"],
    );
    // The agent is asked to stream: it sends what it holds, then each new line.
    await agent.nextCommand((command) => command.command === "startLog");
    await following.printed("buffered line");
    await agent.log({ level: "warn", msg: "pressure high" }, { level: "info", msg: "valve shut" });
    const outcome = await following.outcome;
    expect(outcome.status, outcome.stderr).toBe(0);
    const lines = outcome.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \[warn\] pressure high$/);
    expect(lines[2]).toMatch(/ \[info\] valve shut$/);
  });

  it("prints the recent lines, and the JSON for scripts", async () => {
    const out = await ok(admin, "devices", "logs", "press-1", "--team", "live");
    expect(out).toMatch(/\[warn\] pressure high\n.*\[info\] valve shut\n$/);
    const page = JSON.parse(await ok(admin, "devices", "logs", "press-1", "--json"));
    expect(page.log.at(-1)).toMatchObject({ level: "info", msg: "valve shut" });
  });

  it("restarts the device's Node-RED through its agent", async () => {
    expect(await ok(admin, "devices", "restart", "press-1", "--team", "live")).toBe(
      "Device press-1: Node-RED restarted.\n",
    );
    const command = await agent.nextCommand((c) => c.command === "action");
    expect(command.payload).toEqual({ action: "restart" });
    agent.answers = { action: false };
    const failed = await admin.flowplane("devices", "suspend", "press-1");
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain("It failed");
  });
});
