// `flowplane devices create|generate-credentials` on a platform with a broker: the device.yml it
// prints or writes carries the broker's keys (`brokerURL`, `brokerUsername`, `brokerPassword`), so
// the agent started from it takes the live channel rather than polling over HTTP.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ok, scratchDir, type User } from "./cli";
import { createTeamWithLine, serveWithAdmin } from "./server";

let admin: User;

serveWithAdmin((served) => ({ admin } = served), { broker: true });
beforeAll(async () => {
  await createTeamWithLine(admin, "Live", "live");
});

describe("flowplane devices with a broker", { timeout: 60_000 }, () => {
  it("writes the broker's keys into device.yml, and prints them with new credentials", async () => {
    const file = join(await scratchDir(), "device.yml");
    const out = await ok(
      admin,
      ...["devices", "create", "live-1", "--team", "live", "--application", "Line"],
      ...["--output", file],
    );
    const id = /\(id (\w+)\)/.exec(out)![1]!;
    const yml = await readFile(file, "utf8");
    expect(yml).toMatch(/^brokerURL: "mqtt:\/\/127\.0\.0\.1:\d+"$/m);
    expect(yml).toMatch(new RegExp(`^brokerUsername: "device:\\w+:${id}"$`, "m"));
    expect(yml).toMatch(/^brokerPassword: "[A-Za-z0-9]{32}"$/m);

    const again = await ok(admin, "devices", "generate-credentials", id);
    expect(again).toMatch(/^brokerPassword: "[A-Za-z0-9]{32}"$/m);
    expect(again).not.toContain(yml.match(/brokerPassword: (.*)/)![1]!);
  });
});
