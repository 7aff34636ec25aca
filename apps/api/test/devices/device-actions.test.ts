// A person acting on a device through its agent, over the embedded broker with an agent that
// speaks the real one's MQTT protocol (support/simulated-agent.ts): restart, suspend and start
// answered by the agent's reply, refused as FlowFuse refuses them, audited; and its log, read a
// page at a time and followed as Server-Sent Events.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { SimulatedAgent } from "../support/simulated-agent";
import { teamOfRoles, type TeamOfRoles } from "../support/team-of-roles";
import { waiter } from "../support/until";

const until = waiter(15_000);

let server: TestServer;
let bare: TestServer;
let team: TeamOfRoles;
const agents: SimulatedAgent[] = [];

beforeAll(async () => {
  server = await startServer({
    broker: "embedded",
    deviceLogStream: { heartbeatMs: 100, recheckMs: 100 },
  });
  bare = await startServer();
  team = await teamOfRoles(server, "Actions");
});
afterAll(async () => {
  for (const agent of agents) await agent.end().catch(() => {});
  await server.close();
  await bare.close();
});

let counter = 0;
async function device(on = server, owner = team.owner.token, teamId = team.teamId) {
  const reply = await on.request("POST", "/api/v1/devices", {
    token: owner,
    body: { name: `acted-${++counter}`, team: teamId },
  });
  expect(reply.status, reply.text).toBe(200);
  return {
    id: reply.body.id as string,
    name: reply.body.name as string,
    credentials: reply.body.credentials,
  };
}

async function connected() {
  const made = await device();
  const agent = await SimulatedAgent.connect(made.credentials.broker);
  agents.push(agent);
  await agent.publishStatus({ state: "running" });
  await until("the device online", async () =>
    (await server.request("GET", `/api/v1/devices/${made.id}`, { token: team.owner.token })).body
      .onlineStatus === "online"
      ? true
      : undefined,
  );
  return { ...made, agent };
}

const act = (id: string, action: string, token = team.owner.token) =>
  server.request("POST", `/api/v1/devices/${id}/actions/${action}`, { token });

const events = async (id: string) =>
  (
    await server.request("GET", `/api/v1/devices/${id}/audit-log`, { token: team.owner.token })
  ).body.log.map((entry: { event: string; body: { error?: { code: string } } }) => [
    entry.event,
    entry.body.error?.code,
  ]);

describe("a device's actions", () => {
  test("restart, suspend and start: the agent is asked, its success is 200 and audited", async () => {
    const { id, agent } = await connected();
    for (const action of ["restart", "suspend", "start"]) {
      const reply = await act(id, action);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({ status: "okay" });
      const command = await agent.nextCommand((c) => c.command === "action");
      expect(command.payload).toEqual({ action });
    }
    expect(await events(id)).toEqual(
      expect.arrayContaining([
        ["device.restarted", undefined],
        ["device.suspended", undefined],
        ["device.started", undefined],
      ]),
    );
  });

  test("a failure is 400 with the agent's code and message, and audited as failed", async () => {
    const { id, agent } = await connected();
    agent.answers = { action: false };
    const reply = await act(id, "restart");
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: "action_failed", error: "It failed" });
    expect(await events(id)).toContainEqual(["device.restart-failed", "action_failed"]);
  });

  test("a device that last reported itself suspended is not restarted or suspended, but started", async () => {
    const { id, agent } = await connected();
    await agent.publishStatus({ state: "suspended" });
    await until("the state recorded", async () =>
      (await server.request("GET", `/api/v1/devices/${id}`, { token: team.owner.token })).body
        .status === "suspended"
        ? true
        : undefined,
    );
    for (const action of ["restart", "suspend"]) {
      const reply = await act(id, action);
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("device_suspended");
    }
    expect((await act(id, "start")).status).toBe(200);
  });

  test("offline: device_offline at once; silent: no_response naming the device", async () => {
    const offline = await device();
    const started = Date.now();
    const reply = await act(offline.id, "restart");
    expect(reply.body.code).toBe("device_offline");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await events(offline.id)).toContainEqual(["device.restart-failed", "device_offline"]);

    const { id, name, agent } = await connected();
    agent.answers = { silent: true };
    const silent = await act(id, "suspend");
    expect(silent.status).toBe(400);
    expect(silent.body.code).toBe("no_response");
    expect(silent.body.error).toContain(name);
    expect(await events(id)).toContainEqual(["device.suspend-failed", "no_response"]);
  });

  test("members act; viewers are 403, another team's people 404", async () => {
    const { id } = await connected();
    expect((await act(id, "restart", team.member.token)).status).toBe(200);
    expect((await act(id, "restart", team.viewer.token)).status).toBe(403);
    expect((await act(id, "restart", team.outsider.token)).status).toBe(404);
    expect((await act(id, "restart", team.owner.token)).status).toBe(200);
  });

  test("without a broker: 400 no_device_comms, for actions and logs", async () => {
    const owner = await bare.user();
    const made = await bare.request("POST", "/api/v1/teams", {
      token: owner.token,
      body: { name: "No broker" },
    });
    const { id } = await device(bare, owner.token, made.body.id);
    for (const path of [`actions/restart`]) {
      const reply = await bare.request("POST", `/api/v1/devices/${id}/${path}`, {
        token: owner.token,
      });
      expect(reply.body.code).toBe("no_device_comms");
    }
    for (const path of ["logs", "logs/stream"]) {
      const reply = await bare.request("GET", `/api/v1/devices/${id}/${path}`, {
        token: owner.token,
      });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("no_device_comms");
    }
  });
});

/** Follows the SSE stream: its events as they come, and whether it ended. */
async function follow(id: string, token: string, lastEventId?: string, on = server) {
  const controller = new AbortController();
  const response = await fetch(`${on.url}/api/v1/devices/${id}/logs/stream`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: "text/event-stream",
      ...(lastEventId && { "last-event-id": lastEventId }),
    },
    signal: controller.signal,
  });
  const state = {
    events: [] as { id?: string; event?: string; data: string }[],
    text: "",
    done: false,
    heartbeats: 0,
  };
  if (response.status !== 200) return { response, state, stop: () => {} };
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        state.text += decoder.decode(chunk as Uint8Array, { stream: true });
        let split;
        while ((split = state.text.indexOf("\n\n")) >= 0) {
          const block = state.text.slice(0, split);
          state.text = state.text.slice(split + 2);
          if (block.startsWith(":")) state.heartbeats++;
          else {
            const fields = Object.fromEntries(
              block
                .split("\n")
                .map((line) => [
                  line.slice(0, line.indexOf(":")),
                  line.slice(line.indexOf(":") + 2),
                ]),
            );
            state.events.push(fields as { data: string });
          }
        }
      }
    } catch {
      // Aborted.
    }
    state.done = true;
  })();
  return { response, state, stop: () => controller.abort() };
}

describe("a device's log", () => {
  test("read a page at a time: the agent is asked to stream, lines are kept and paged", async () => {
    const { id, agent } = await connected();
    const first = await server.request("GET", `/api/v1/devices/${id}/logs`, {
      token: team.viewer.token,
    });
    expect(first.status, first.text).toBe(200);
    await agent.nextCommand((c) => c.command === "startLog");
    await agent.log({ level: "info", msg: "one" }, { level: "warn", msg: "two" });
    const page = await until("the lines kept", async () => {
      const reply = await server.request("GET", `/api/v1/devices/${id}/logs?limit=10`, {
        token: team.viewer.token,
      });
      return reply.body.log.length >= 3 ? reply.body : undefined;
    });
    expect(page.log.map((line: { msg: string }) => line.msg)).toEqual([
      "buffered line",
      "one",
      "two",
    ]);
    expect(page.log[2]).toMatchObject({
      level: "warn",
      id: expect.any(Number),
      ts: expect.any(Number),
    });
    const after = await server.request(
      "GET",
      `/api/v1/devices/${id}/logs?cursor=${page.log[1].id}`,
      { token: team.viewer.token },
    );
    expect(after.body.log.map((line: { msg: string }) => line.msg)).toEqual(["two"]);
    expect(after.body.meta.next_cursor).toBe(String(page.log[2].id));
    const outsider = await server.request("GET", `/api/v1/devices/${id}/logs`, {
      token: team.outsider.token,
    });
    expect(outsider.status).toBe(404);
  });

  test("followed live: each line an event with its id, heartbeats, resumed with Last-Event-ID, ended with the device's session", async () => {
    const { id, agent } = await connected();
    const stream = await follow(id, team.viewer.token);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
    await agent.nextCommand((c) => c.command === "startLog");
    await agent.log({ level: "info", msg: "live one" });
    await until("the line streamed", async () =>
      stream.state.events.some((e) => e.data.includes("live one")) ? true : undefined,
    );
    const line = stream.state.events.find((e) => e.data.includes("live one"))!;
    expect(JSON.parse(line.data)).toMatchObject({
      level: "info",
      msg: "live one",
      id: Number(line.id),
    });
    await until("a heartbeat", async () => (stream.state.heartbeats > 0 ? true : undefined));

    await agent.log({ level: "info", msg: "live two" });
    await until("the second line", async () =>
      stream.state.events.some((e) => e.data.includes("live two")) ? true : undefined,
    );
    const resumed = await follow(id, team.viewer.token, line.id);
    await until("the lines after the last seen", async () =>
      resumed.state.events.length > 0 ? true : undefined,
    );
    expect(resumed.state.events.map((e) => JSON.parse(e.data).msg)).toEqual(["live two"]);

    await agent.end();
    await until("both streams ended", async () =>
      stream.state.done && resumed.state.done ? true : undefined,
    );
    expect(stream.state.events.at(-1)?.event).toBe("end");
  });

  test("a revoked token ends the stream; another team's people get 404, no token 401", async () => {
    const { id } = await connected();
    const created = await server.request("POST", "/api/v1/user/tokens", {
      token: team.viewer.token,
      body: { name: "watching" },
    });
    expect(created.status, created.text).toBe(200);
    const stream = await follow(id, created.body.token);
    expect(stream.response.status).toBe(200);
    await server.request("DELETE", `/api/v1/user/tokens/${created.body.id}`, {
      token: team.viewer.token,
    });
    await until("the stream ended", async () => (stream.state.done ? true : undefined));
    expect((await follow(id, team.outsider.token)).response.status).toBe(404);
    const anonymous = await fetch(`${server.url}/api/v1/devices/${id}/logs/stream`);
    expect(anonymous.status).toBe(401);
  });
});

test("the server's close ends the streams", async () => {
  const closing = await startServer({ broker: "embedded" });
  const owner = await closing.user();
  const made = await closing.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: "Closing" },
  });
  const { id } = await device(closing, owner.token, made.body.id);
  const stream = await follow(id, owner.token, undefined, closing);
  expect(stream.response.status).toBe(200);
  await closing.close();
  await until("the stream ended", async () => (stream.state.done ? true : undefined));
});
