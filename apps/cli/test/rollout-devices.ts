// Devices for the rollout tests: each speaks the agent's HTTP protocol as the real agent does (the
// API's test/rollouts/http-device.ts, cut down) — it checks in, downloads the snapshot a 409 names,
// reports running it and, when what it was served carries a rollout's health tab, reports its
// flows' start to the tab's URL with the tab's credential. `follow()` keeps them all checking in
// while a command runs.
import { expect } from "vitest";
import { adminApi as api, type TestServer } from "./server";

interface Health {
  url: string;
  authorization: string;
}

/** The health tab's report URL and credential, from the served flows (none: no tab). */
function healthOf(flows: { id?: string; func?: string }[]): Health | undefined {
  const report = flows.find((node) => node.id === "flowplane-rollout-health-report");
  const url = report?.func && /url: ("[^"]+")/.exec(report.func)?.[1];
  const authorization = report?.func && /authorization: ("[^"]+")/.exec(report.func)?.[1];
  return url && authorization
    ? { url: JSON.parse(url), authorization: JSON.parse(authorization) }
    : undefined;
}

export class HttpDevice {
  runs: string | null = null;
  private settings: string | null = null;

  constructor(
    private readonly server: TestServer,
    readonly id: string,
    readonly name: string,
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
    let health: Health | undefined;
    if (changed && wanted.snapshot !== null) {
      const snapshot = await fetch(`${this.server.url}/api/v1/devices/${this.id}/live/snapshot`, {
        headers: { authorization: `Bearer ${this.token}` },
      });
      expect(snapshot.status).toBe(200);
      health = healthOf(((await snapshot.json()) as { flows: { id?: string }[] }).flows);
    }
    this.runs = wanted.snapshot;
    this.settings = wanted.settings;
    expect((await this.checkIn()).status).toBe(200);
    if (health) {
      // The flows started: reported as the health tab posts it (to this server).
      const reply = await fetch(`${this.server.url}${new URL(health.url).pathname}`, {
        method: "POST",
        headers: { authorization: health.authorization, "content-type": "application/json" },
        body: JSON.stringify({ event: "started" }),
      });
      expect(reply.status, await reply.text()).toBe(200);
    }
  }
}

export interface Fleet {
  applicationId: string;
  /** The device group holding every device, by name. */
  group: string;
  devices: HttpDevice[];
  /** Snapshots of the application (device snapshots), by name: the group runs the first. */
  snapshots: string[];
  /** Keeps the devices checking in (every 100 ms) until the returned function is called. */
  follow(): () => Promise<void>;
}

/**
 * In the application, a group `group` of `count` devices, snapshots named `snapshots` (imported as
 * the first device's), and the group's members running the first.
 */
export async function fleet(
  server: TestServer,
  teamId: string,
  applicationId: string,
  { group, count, snapshots }: { group: string; count: number; snapshots: string[] },
): Promise<Fleet> {
  const devices: HttpDevice[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `${group}-${i}`;
    const created = await api(server, "POST", "/api/v1/devices", {
      name,
      team: teamId,
      application: applicationId,
    });
    devices.push(
      new HttpDevice(server, created.id, name, created.credentials.token, applicationId),
    );
  }
  const snapshotIds: string[] = [];
  for (const name of snapshots) {
    const imported = await api(server, "POST", "/api/v1/snapshots/import", {
      ownerType: "device",
      ownerId: devices[0]!.id,
      snapshot: { name, flows: { flows: [] }, settings: {} },
    });
    snapshotIds.push(imported.id);
  }
  const groups = `/api/v1/applications/${applicationId}/device-groups`;
  const { id: groupId } = await api(server, "POST", groups, { name: group });
  await api(server, "PATCH", `${groups}/${groupId}`, { add: devices.map((d) => d.id) });
  await api(server, "PUT", `${groups}/${groupId}`, { targetSnapshotId: snapshotIds[0] });
  for (const device of devices) {
    await device.follow();
    expect(device.runs).toBe(snapshotIds[0]);
  }
  return {
    applicationId,
    group,
    devices,
    snapshots: snapshotIds,
    follow() {
      let stopped = false;
      const loop = (async () => {
        while (!stopped) {
          for (const device of devices) await device.follow();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      return async () => {
        stopped = true;
        await loop;
      };
    },
  };
}
