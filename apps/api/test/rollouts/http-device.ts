// A device that speaks the agent's HTTP protocol as the real agent does, without Node-RED: it
// checks in, downloads the snapshot a 409 names, reports running it, and — when what it was
// served carries a rollout's health tab — reports its flows' start to the URL with the credential
// the tab's function node holds (read from the served flows, as Node-RED would run them).
import { expect } from "vitest";
import type { TestServer } from "../support/harness";
import { createInstance, createSnapshot } from "../support/team-fixtures";

interface Health {
  url: string;
  authorization: string;
}

/** The health tab's report URL and credential, from the served flows (none: no tab). */
export function healthOf(flows: { id?: string; func?: string }[]): Health | undefined {
  const report = flows.find((node) => node.id === "flowplane-rollout-health-report");
  if (!report?.func) return undefined;
  const url = /url: ("[^"]+")/.exec(report.func)?.[1];
  const authorization = /authorization: ("[^"]+")/.exec(report.func)?.[1];
  if (!url || !authorization) return undefined;
  return { url: JSON.parse(url), authorization: JSON.parse(authorization) };
}

export class HttpDevice {
  runs: string | null = null;
  settings: string | null = null;
  /** How many snapshots it downloaded. */
  downloads = 0;
  flows: { id?: string; type?: string; func?: string }[] = [];
  health: Health | undefined;
  /** What its "flows" do when they start (after reporting the start). */
  onStart?: () => Promise<unknown> | unknown;

  constructor(
    private readonly server: TestServer,
    readonly id: string,
    private readonly token: string,
    private readonly applicationId: string,
  ) {}

  private checkIn() {
    return fetch(`${this.server.url}/api/v1/devices/${this.id}/live/state`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        state: "running",
        application: this.applicationId,
        project: null,
        snapshot: this.runs,
        settings: this.settings,
        agentVersion: "4.2.1",
        nodeRedVersion: "4.1.15",
      }),
    });
  }

  /** One check-in; when told to run something else, it deploys it and checks in again. */
  async follow() {
    const reply = await this.checkIn();
    if (reply.status === 200) return;
    expect(reply.status).toBe(409);
    const wanted = (await reply.json()) as { snapshot: string | null; settings: string };
    const changed = wanted.snapshot !== this.runs;
    if (changed && wanted.snapshot !== null) {
      const snapshot = await fetch(`${this.server.url}/api/v1/devices/${this.id}/live/snapshot`, {
        headers: { authorization: `Bearer ${this.token}` },
      });
      expect(snapshot.status).toBe(200);
      this.flows = ((await snapshot.json()) as { flows: HttpDevice["flows"] }).flows;
      this.downloads++;
      this.health = healthOf(this.flows);
    }
    this.runs = wanted.snapshot;
    this.settings = wanted.settings;
    expect((await this.checkIn()).status).toBe(200);
    if (changed && this.health) {
      await this.report({ event: "started" });
      await this.onStart?.();
    }
  }

  /** A report of its flows to the rollout, as the health tab posts it (to this server). */
  async report(body: Record<string, unknown>) {
    const url = new URL(this.health!.url);
    const reply = await fetch(`${this.server.url}${url.pathname}`, {
      method: "POST",
      headers: { authorization: this.health!.authorization, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
    return reply.json();
  }
}

export interface RolloutFixture {
  applicationId: string;
  groupId: string;
  devices: HttpDevice[];
  /** What the group's members run. */
  current: string;
  /** Another snapshot of the application, to roll out. */
  next: string;
}

let counter = 0;

/** An application whose group of `count` devices runs a snapshot, and another snapshot of it. */
export async function rolloutFixture(
  server: TestServer,
  owner: { token: string },
  teamId: string,
  count: number,
): Promise<RolloutFixture> {
  const instanceId = await createInstance(server, owner, teamId);
  const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
    token: owner.token,
  });
  const applicationId = instance.body.application.id as string;
  const current = await createSnapshot(server, owner, instanceId);
  const next = await createSnapshot(server, owner, instanceId);
  const group = await server.request(
    "POST",
    `/api/v1/applications/${applicationId}/device-groups`,
    {
      token: owner.token,
      body: { name: `group ${++counter}` },
    },
  );
  expect(group.status, group.text).toBe(201);
  const groupId = group.body.id as string;
  const devices: HttpDevice[] = [];
  for (let i = 0; i < count; i++) {
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: `device ${counter}-${i}`, team: teamId, application: applicationId },
    });
    expect(created.status, created.text).toBe(200);
    devices.push(
      new HttpDevice(server, created.body.id, created.body.credentials.token, applicationId),
    );
  }
  const groupPath = `/api/v1/applications/${applicationId}/device-groups/${groupId}`;
  const added = await server.request("PATCH", groupPath, {
    token: owner.token,
    body: { add: devices.map((d) => d.id) },
  });
  expect(added.status, added.text).toBe(200);
  const target = await server.request("PUT", groupPath, {
    token: owner.token,
    body: { targetSnapshotId: current },
  });
  expect(target.status, target.text).toBe(200);
  for (const device of devices) {
    await device.follow();
    expect(device.runs).toBe(current);
  }
  return { applicationId, groupId, devices, current, next };
}

/** The rollout once `done` says so, the devices following meanwhile (up to 30 s). */
export async function waitForRollout(
  server: TestServer,
  user: { token: string },
  id: string,
  done: (rollout: any) => boolean,
  devices: HttpDevice[] = [],
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    for (const device of devices) await device.follow();
    const reply = await server.request("GET", `/api/v1/rollouts/${id}`, { token: user.token });
    expect(reply.status, reply.text).toBe(200);
    last = reply.body;
    if (done(reply.body)) return reply.body;
    if (Date.now() > deadline) {
      throw new Error(`the rollout did not get there: ${JSON.stringify(last, null, 1)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
