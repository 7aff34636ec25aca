// A person's notifications (FlowFuse's /api/v1/user/notifications), fed by events: an invitation
// lands in the invitee's inbox; a device offline in the inbox of each member of its team who may
// see devices, not another team's; a failed rollout in its owners' and members' but not its
// viewers', nor its actor's. Marking read and unread (one and many), deleting, another's id 404,
// a read-only token that lists but may not change. The device's and the rollout's events are
// written with recordEvent here: their emitters are another area's.
import { Role } from "@flowplane/contract";
import { recordEvent } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { asPerson, type SignedInPerson, signedInPerson } from "../support/signed-in";
import { waiter } from "../support/until";

const until = waiter(10_000, 50);

let server: TestServer;
let owner: SignedInPerson, member: SignedInPerson, viewer: SignedInPerson;
let elsewhere: SignedInPerson;
let teamId: string;

interface Listed {
  count: number;
  unread: number;
  meta: { next_cursor?: string };
  notifications: {
    id: string;
    type: string;
    read: boolean;
    createdAt: string;
    data: { title: string; message: string; url: string; team?: { id: string; name: string } };
  }[];
}

const inbox = async (who: SignedInPerson) => {
  const reply = await asPerson(server, who, "GET", "/api/v1/user/notifications");
  expect(reply.status, reply.text).toBe(200);
  return reply.body as Listed;
};

/** The person's notification of that type, once it is there. */
const arrived = (who: SignedInPerson, type: string) =>
  until(`a ${type} notification for ${who.username}`, async () =>
    (await inbox(who)).notifications.find((n) => n.type === type),
  );

beforeAll(async () => {
  server = await startServer({ rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } } });
  owner = await signedInPerson(server);
  const team = await asPerson(server, owner, "POST", "/api/v1/teams", { name: "Plant" });
  teamId = team.body.id as string;
  member = await signedInPerson(server, [{ id: teamId, role: Role.member }]);
  viewer = await signedInPerson(server, [{ id: teamId, role: Role.viewer }]);
  elsewhere = await signedInPerson(server);
  await asPerson(server, elsewhere, "POST", "/api/v1/teams", { name: "Elsewhere" });
});
afterAll(() => server?.close());

describe("what notifies whom", () => {
  test("an invitation lands in the invitee's inbox, not the inviter's", async () => {
    const invitee = await signedInPerson(server);
    const sent = await asPerson(server, owner, "POST", `/api/v1/teams/${teamId}/invitations`, {
      user: invitee.username,
      role: Role.member,
    });
    expect(sent.status, sent.text).toBe(200);
    const invite = await arrived(invitee, "team-invite");
    expect(invite.read).toBe(false);
    expect(invite.data.title).toBe("Invitation to Plant");
    expect(invite.data.message).toContain("as member");
    expect(invite.data.url).toBe("/teams");
    expect(invite.data.team).toEqual({ id: teamId, name: "Plant" });
    const listed = await inbox(invitee);
    expect(listed).toMatchObject({ count: 1, unread: 1, meta: {} });
    expect((await inbox(owner)).notifications.some((n) => n.type === "team-invite")).toBe(false);
  });

  test("a device offline reaches each member of its team, not another team's", async () => {
    await recordEvent(server.db, {
      type: "device.offline",
      teamId,
      entity: { type: "device", id: "dev-pump-3" },
      data: { device: { id: "dev-pump-3", name: "Pump 3" } },
    });
    for (const who of [owner, member, viewer]) {
      const offline = await arrived(who, "device-offline");
      expect(offline.data.title).toBe("Device Pump 3 is offline");
      expect(offline.data.message).toBe("Device Pump 3 in team Plant is offline.");
      expect(offline.data.url).toBe(`/teams/${teamId}/devices/dev-pump-3`);
    }
    // The rows of one event are written in one statement: all of them are there now.
    expect((await inbox(elsewhere)).count).toBe(0);
  });

  test("a failed rollout reaches owners and members, not viewers, nor the actor", async () => {
    await recordEvent(server.db, {
      type: "application.rollout.failed",
      teamId,
      entity: { type: "application", id: "app-1" },
      actor: { userId: owner.id, tokenId: null },
      data: { rollout: { id: "ro-1" }, snapshot: { id: "s-1", name: "v2" }, reason: "too many" },
    });
    const failed = await arrived(member, "rollout-failed");
    expect(failed.data.message).toBe("The rollout of snapshot v2 in team Plant failed: too many.");
    expect(failed.data.url).toBe(`/teams/${teamId}/rollouts/ro-1`);
    for (const who of [owner, viewer]) {
      expect((await inbox(who)).notifications.some((n) => n.type === "rollout-failed")).toBe(false);
    }
  });
});

describe("crashes and failed deploys", () => {
  test("an instance crashed reaches viewers; a failed deploy only owners and members", async () => {
    await recordEvent(server.db, {
      type: "project.crashed",
      teamId,
      entity: { type: "project", id: "inst-1" },
      data: { project: { id: "inst-1", name: "line-a" }, reason: "exit code 1" },
    });
    await recordEvent(server.db, {
      type: "application.pipeline.stage-deploy-failed",
      teamId,
      entity: { type: "application", id: "app-1" },
      data: {
        application: { id: "app-1", name: "Line" },
        pipeline: { id: "pl-1", name: "Release" },
        sourceStage: { id: "st-1", name: "Dev" },
        targetStage: { id: "st-2", name: "Prod" },
        error: { code: "deploy_failed", error: "the target is gone" },
      },
    });
    const crashed = await arrived(viewer, "instance-crashed");
    expect(crashed.data.message).toBe("Instance line-a in team Plant crashed: exit code 1.");
    const failed = await arrived(owner, "pipeline-deploy-failed");
    expect(failed.data.title).toBe("Deploy to Prod failed");
    expect(failed.data.url).toBe(`/teams/${teamId}/pipelines/pl-1`);
    await arrived(member, "pipeline-deploy-failed");
    expect(
      (await inbox(viewer)).notifications.some((n) => n.type === "pipeline-deploy-failed"),
    ).toBe(false);
    // Out of the way of the inbox tests below.
    for (const who of [owner, member, viewer]) {
      for (const n of (await inbox(who)).notifications) {
        if (n.type === "instance-crashed" || n.type === "pipeline-deploy-failed") {
          await asPerson(server, who, "DELETE", `/api/v1/user/notifications/${n.id}`);
        }
      }
    }
  });
});

describe("a person's inbox", () => {
  test("newest first, paged, with its counts", async () => {
    const first = await asPerson(server, member, "GET", "/api/v1/user/notifications?limit=1");
    expect(first.status).toBe(200);
    const page = first.body as Listed;
    expect(page.count).toBe(2);
    expect(page.notifications.map((n) => n.type)).toEqual(["rollout-failed"]);
    const next = await asPerson(
      server,
      member,
      "GET",
      `/api/v1/user/notifications?limit=1&cursor=${page.meta.next_cursor}`,
    );
    expect((next.body as Listed).notifications.map((n) => n.type)).toEqual(["device-offline"]);
    expect((next.body as Listed).meta).toEqual({});
  });

  test("marks one read and unread, many at once, and deletes; another's is 404", async () => {
    const [newest, older] = (await inbox(member)).notifications;
    const path = `/api/v1/user/notifications/${newest!.id}`;
    const read = await asPerson(server, member, "PUT", path, { read: true });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({ status: "okay" });
    expect(await inbox(member)).toMatchObject({ count: 2, unread: 1 });
    await asPerson(server, member, "PUT", path, { read: false });
    expect((await inbox(member)).unread).toBe(2);

    const ids = [newest!.id, older!.id];
    const bulk = await asPerson(server, member, "PUT", "/api/v1/user/notifications", {
      ids,
      read: true,
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(bulk.body).toMatchObject({ count: 2, unread: 0 });
    expect((bulk.body as Listed).notifications.every((n) => n.read)).toBe(true);

    // Another person's notification is as absent as one that never was, for every verb.
    expect((await asPerson(server, viewer, "PUT", path, { read: false })).status).toBe(404);
    expect((await asPerson(server, viewer, "DELETE", path)).status).toBe(404);
    const viewersOwn = (await inbox(viewer)).notifications[0]!.id;
    const theirs = await asPerson(server, viewer, "PUT", "/api/v1/user/notifications", {
      ids: [viewersOwn, newest!.id],
      read: true,
    });
    expect(theirs.status).toBe(400);
    expect(theirs.body.errors).toEqual([
      { path: "ids.1", message: "Not one of your notifications" },
    ]);
    // Nothing was marked: not the viewer's own either.
    expect((await inbox(viewer)).notifications[0]).toMatchObject({ id: viewersOwn, read: false });
    expect((await inbox(member)).unread).toBe(0);

    const gone = await asPerson(server, member, "DELETE", path);
    expect(gone.status, gone.text).toBe(200);
    expect((await asPerson(server, member, "DELETE", path)).status).toBe(404);
    expect((await inbox(member)).notifications.map((n) => n.id)).toEqual([older!.id]);
  });

  test("a read-only token lists them but may not change them", async () => {
    const reader = await server.user({
      teams: [{ id: teamId, role: Role.viewer }],
      scope: { readOnly: true },
    });
    await recordEvent(server.db, {
      type: "device.crashed",
      teamId,
      entity: { type: "device", id: "dev-7" },
      data: { device: { id: "dev-7", name: "Press" }, state: "crashed" },
    });
    const list = () => server.request("GET", "/api/v1/user/notifications", { token: reader.token });
    const crashed = await until("the reader's notification", async () => {
      const body = (await list()).body as Listed;
      return body.notifications.find((n) => n.type === "device-crashed");
    });
    expect(crashed.data.title).toBe("Device Press crashed");
    const path = `/api/v1/user/notifications/${crashed.id}`;
    const options = { token: reader.token };
    expect((await server.request("PUT", path, { ...options, body: { read: true } })).status).toBe(
      403,
    );
    expect((await server.request("DELETE", path, options)).status).toBe(403);
    const bulk = await server.request("PUT", "/api/v1/user/notifications", {
      ...options,
      body: { ids: [crashed.id], read: true },
    });
    expect(bulk.status).toBe(403);
  });
});
