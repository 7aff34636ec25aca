// The rollout pages over plain HTTP, as a browser without script uses them: the group's page offers
// owners "Roll out a snapshot"; bad waves are a form error; Plan shows each wave's devices with
// what they run now and will run, and its Start starts the rollout and leads to its page; the page
// shows the state, the waves and their devices, and the owner's actions; abort is asked first on a
// page of its own, then done. The group's and the application's lists show it. Members and viewers
// read without forms; another team's member gets a 404.
import { Role } from "@flowplane/contract";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TestServer } from "../support/harness";
import { pagesTeam, type SignedInPerson, signedInPerson } from "../support/signed-in";
import { rolloutFixture, type RolloutFixture } from "./rollout-fleet";

let server: TestServer;
let owner: SignedInPerson, member: SignedInPerson, viewer: SignedInPerson;
let outsider: SignedInPerson;
let teamId: string;
let fleet: RolloutFixture;

beforeAll(async () => {
  ({ server, owner, member, viewer, teamId } = await pagesTeam("Fleet", "ro-dev"));
  const tokenOwner = await server.user({ teams: [{ id: teamId, role: Role.owner }] });
  fleet = await rolloutFixture(server, tokenOwner, teamId, 3);
  outsider = await signedInPerson(server);
});
afterAll(() => server?.close());

const groupPath = () => `/teams/${teamId}/device-groups/${fleet.groupId}`;
const form = (extra: Record<string, string>) => ({
  snapshotId: fleet.next,
  waves: "1,100%",
  soakSeconds: "3600",
  maxFailures: "0",
  ...extra,
});

describe("rollout pages", () => {
  let rolloutPath: string;

  test("the group's page offers owners the form, and links every role to the rollouts", async () => {
    const mine = await server.page("GET", groupPath(), { sid: owner.sid });
    expect(mine.status).toBe(200);
    expect(mine.html).toContain("Roll out a snapshot");
    expect(mine.html).toContain(`action="${groupPath()}/rollouts"`);
    const theirs = await server.page("GET", groupPath(), { sid: member.sid });
    expect(theirs.status).toBe(200);
    expect(theirs.html).not.toContain("Roll out a snapshot");
    expect(theirs.html).toContain(`href="${groupPath()}/rollouts"`);
  });

  test("bad waves are a form error; Plan shows the plan; its Start starts it", async () => {
    const bad = await server.page("POST", `${groupPath()}/rollouts`, {
      sid: owner.sid,
      form: form({ waves: "1,lots", intent: "start" }),
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Wave 2 (“lots”) is neither a number");
    expect(bad.html).toContain('aria-invalid="true"');
    expect(bad.html).toContain('value="1,lots"');
    const zero = await server.page("POST", `${groupPath()}/rollouts`, {
      sid: owner.sid,
      form: form({ waves: "0", intent: "plan" }),
    });
    expect(zero.status).toBe(400);
    expect(zero.html).toContain('id="rollout-waves-error"');

    const plan = await server.page("POST", `${groupPath()}/rollouts`, {
      sid: owner.sid,
      form: form({ intent: "plan" }),
    });
    expect(plan.status, plan.html).toBe(200);
    expect(plan.html).toContain("Wave 1: 1 device");
    expect(plan.html).toContain("Wave 2: 2 devices");
    expect(plan.html).toContain('name="intent" value="start"');
    expect(plan.html).toContain('name="waves" value="1,100%"');
    const none = await server.page("GET", `${groupPath()}/rollouts`, { sid: owner.sid });
    expect(none.html).toContain("No rollouts yet");

    const started = await server.page("POST", `${groupPath()}/rollouts`, {
      sid: owner.sid,
      form: form({ intent: "start" }),
    });
    expect(started.status, started.html).toBe(303);
    const location = started.location as string;
    expect(location).toMatch(new RegExp(`^/teams/${teamId}/rollouts/[^/?]+\\?done=started$`));
    rolloutPath = location.replace(/\?.*$/, "");

    const page = await server.page("GET", location, { sid: owner.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("The rollout is started");
    expect(page.html).toContain("Wave 1");
    expect(page.html).toContain("Wave 2");
    expect(page.html).toContain(`action="${rolloutPath}/pause"`);
    expect(page.html).toContain(`action="${rolloutPath}/abort"`);
    expect(page.html).not.toContain(`action="${rolloutPath}/resume"`);
    expect(page.html).toContain("Refresh");

    const lists = [
      [member, `${groupPath()}/rollouts`],
      [viewer, `/teams/${teamId}/applications/${fleet.applicationId}/rollouts`],
    ] as const;
    for (const [who, list] of lists) {
      const shown = await server.page("GET", list, { sid: who.sid });
      expect(shown.status).toBe(200);
      expect(shown.html).toContain(`href="${rolloutPath}"`);
    }
  });

  test("members and viewers read the rollout without its actions; another team gets a 404", async () => {
    for (const who of [member, viewer]) {
      const page = await server.page("GET", rolloutPath, { sid: who.sid });
      expect(page.status).toBe(200);
      expect(page.html).toContain("Wave 1");
      expect(page.html).not.toContain(`${rolloutPath}/abort`);
      const tried = await server.page("POST", `${rolloutPath}/pause`, { sid: who.sid });
      expect(tried.html).toContain("Wave 1");
      expect(tried.status).toBe(403);
    }
    const list = await server.page("GET", `${groupPath()}/rollouts`, { sid: member.sid });
    expect(list.status).toBe(200);
    expect(list.html).not.toContain("Roll out a snapshot");
    expect((await server.page("GET", rolloutPath, { sid: outsider.sid })).status).toBe(404);
    expect(
      (await server.page("GET", `${groupPath()}/rollouts`, { sid: outsider.sid })).status,
    ).toBe(404);
  });

  test("pause, resume, then abort asked first on a page of its own", async () => {
    const paused = await server.page("POST", `${rolloutPath}/pause`, { sid: owner.sid });
    expect(paused.status).toBe(303);
    const page = await server.page("GET", paused.location as string, { sid: owner.sid });
    expect(page.html).toContain("The rollout is paused");
    expect(page.html).toContain(`action="${rolloutPath}/resume"`);
    expect((await server.page("POST", `${rolloutPath}/resume`, { sid: owner.sid })).status).toBe(
      303,
    );
    const again = await server.page("POST", `${rolloutPath}/resume`, { sid: owner.sid });
    expect(again.status).toBe(409);
    expect(again.html).toContain("only a paused rollout can be resumed");

    const asked = await server.page("POST", `${rolloutPath}/abort`, { sid: owner.sid });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("Abort the rollout?");
    expect(asked.html).toContain('name="confirmed" value="yes"');
    const aborted = await server.page("POST", `${rolloutPath}/abort`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(aborted.status).toBe(303);
    const after = await server.page("GET", aborted.location as string, { sid: owner.sid });
    expect(after.html).toContain("The rollout is aborted");
    expect(after.html).toContain("Aborted by an owner");
    expect(after.html).not.toContain(`action="${rolloutPath}/abort"`);
  });
});
