// Devices for the rollout tests: each speaks the agent's HTTP protocol as the real agent does (the
// API's HttpDevice) — it checks in, downloads the snapshot a 409 names, reports running it and,
// when what it was served carries a rollout's health tab, reports its flows' start to the tab's URL
// with the tab's credential. `follow()` keeps them all checking in while a command runs.
import { HttpDevice } from "@flowplane/api/testing/http-device";
import { expect } from "vitest";
import { adminApi as api, type TestServer } from "./server";

/** A device of the fleet, with its name (the tables print it). */
export class NamedDevice extends HttpDevice {
  constructor(
    server: { url: string },
    id: string,
    readonly name: string,
    token: string,
    applicationId: string,
  ) {
    super(server, id, token, applicationId);
  }
}

export interface Fleet {
  applicationId: string;
  /** The device group holding every device, by name. */
  group: string;
  devices: NamedDevice[];
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
  const devices: NamedDevice[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `${group}-${i}`;
    const created = await api(server, "POST", "/api/v1/devices", {
      name,
      team: teamId,
      application: applicationId,
    });
    devices.push(
      new NamedDevice(server, created.id, name, created.credentials.token, applicationId),
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
