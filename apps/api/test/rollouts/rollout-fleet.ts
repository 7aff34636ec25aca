// The rollout tests' fleet: an application whose group of devices (HttpDevice: the agent's HTTP
// protocol, without Node-RED) runs a snapshot, another snapshot of it to roll out, and the wait for
// a rollout's state while the devices keep checking in.
import { expect } from "vitest";
import type { TestServer } from "../support/harness";
import { HttpDevice } from "../support/http-device";
import { createInstance, createSnapshot } from "../support/team-fixtures";

export { HttpDevice };

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
