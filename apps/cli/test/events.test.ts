import { beforeAll, describe, expect, it } from "vitest";
import { ok, type User } from "./cli";
import { serveWithAdmin } from "./server";

let admin: User;
let team: { id: string; slug: string };
serveWithAdmin((served) => ({ admin } = served));
beforeAll(async () => {
  const created = await ok(
    admin,
    "teams",
    "create",
    "Event Crew",
    "--slug",
    "event-crew",
    "--json",
  );
  team = JSON.parse(created);
  await ok(admin, "teams", "rename", team.id, "Event Crew Two");
  // Events get their ids as they commit, a moment after the write: wait until both are listed.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const listed = (await ok(admin, "events", "--team", team.id, "--json")).trim();
    if (listed.split("\n").length >= 2) break;
    if (Date.now() > deadline) throw new Error(`the team's events were not listed: ${listed}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { id: string; type: string; resource: { id: string } });

describe("flowplane events", { timeout: 60_000 }, () => {
  it("prints the team's events oldest first, one line each, and JSON lines for scripts", async () => {
    const out = await ok(admin, "events", "--team", "event-crew");
    const lines = out.trim().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  team.created  team ${team.id}  #\\d+$`,
      ),
    );
    expect(lines[1]).toMatch(/ {2}team\.settings\.updated {2}/);
    const events = jsonLines(await ok(admin, "events", "--team", team.id, "--json"));
    expect(events.map((event) => event.type)).toEqual(["team.created", "team.settings.updated"]);
    const only = jsonLines(
      await ok(admin, "events", "--team", team.id, "--type", "team.settings.updated", "--json"),
    );
    expect(only.map((event) => event.type)).toEqual(["team.settings.updated"]);
  });

  it("--follow prints new events as they happen, from after --cursor", async () => {
    const [, last] = jsonLines(await ok(admin, "events", "--team", team.id, "--json"));
    const following = admin.start(
      ...["events", "--team", team.id, "--follow", "--json", "--cursor", last!.id],
      ...["--max-events", "2"],
    );
    await ok(admin, "teams", "rename", team.id, "Event Crew Three");
    await ok(admin, "teams", "rename", team.id, "Event Crew Four");
    const outcome = await following.outcome;
    expect(outcome.status, outcome.stderr).toBe(0);
    const followed = jsonLines(outcome.stdout);
    expect(followed.map((event) => event.type)).toEqual([
      "team.settings.updated",
      "team.settings.updated",
    ]);
    expect(BigInt(followed[0]!.id) > BigInt(last!.id)).toBe(true);
  });

  it("a cursor that is not an event id is the API's error", async () => {
    const refused = await admin.flowplane("events", "--team", team.id, "--cursor", "nope");
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/cursor/i);
  });
});
