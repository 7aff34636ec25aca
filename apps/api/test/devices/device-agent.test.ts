// The real FlowFuse device agent (4.2.1, from ../shared/clients/, installed outside the
// repository) against the real server: a hosted instance runs (real Node-RED) a flow whose HTTP
// endpoint answers with a credential and a variable; a snapshot taken of it while it runs is set as
// the target of a device created through the API (its device.yml written as an operator would),
// and the device's own Node-RED answers that endpoint with the credential and variables decrypted;
// a second snapshot of the instance (its flow changed) replaces it and the device reports it; a
// snapshot taken of the running device holds what it runs; a provisioning-token start does the
// same; and so does a one-time-code setup (`--otc`), which writes the device.yml the agent then
// runs; and a registration from the agent's own terminal (its interactive prompts, in a terminal
// that `script` gives it), completed by a person on the page it prints. An application's device
// starts Node-RED once per target (agent 4.2 took the `project` key of its first target's 409 for
// an instance, and restarted for the application next). The agent installs node-red with npm on
// its first snapshot (~20 s): slow, so CI runs it and a machine without the agent's package skips
// it (CI fails instead).
import { decryptCredentials } from "@flowplane/auth";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Agent,
  agentPackage,
  DeviceAgents,
  helloFlows as flows,
  helloOf,
  run,
} from "../support/device-agent";
import { deployFlows, freePort, startServer, type TestServer } from "../support/harness";
import {
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let instanceId: string;
const agents = new DeviceAgents();
const agentEntry = () => agents.entry();
const agentEnv = () => agents.env();
const deviceDir = () => agents.deviceDir();
const startAgent = (config: Record<string, unknown> | { dir: string }) => agents.start(config);
const stopAgent = (agent: Agent) => agents.stop(agent);

/** The agent's command line for a setup: its directory, a free port, `more`, no import, no start. */
const setupArgs = async (dir: string, ...more: string[]) => [
  agentEntry(),
  "--dir",
  dir,
  "--port",
  String(await freePort()),
  ...more,
  "--otc-no-import",
  "--otc-no-start",
];

/** The agent's setup with a one-time code, as an operator types it: no prompts, no start. */
async function setUpWithCode(dir: string, otc: string) {
  const args = await setupArgs(dir, "--otc", otc, "--ff-url", server.url);
  return run(process.execPath, args, { env: agentEnv() });
}

/** Waits for what `check` finds (undefined: not yet), polling, up to `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 120_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

let instanceUrl: string;

/**
 * A snapshot of the running instance once it runs `label`'s flow: the flow deployed to its
 * Node-RED through the editor's API (the credential with it), its /hello answering with the
 * credential and the variable, then the snapshot taken of what it runs (no content sent).
 */
async function snapshotOfRunning(name: string, label: string) {
  const deployed = await deployFlows(server, instanceId, owner.token, flows(label));
  expect(deployed.status, await deployed.text()).toBe(204);
  const answer = await until(`the instance answering ${label}`, async () => {
    const reply = await fetch(`${instanceUrl}/hello`);
    const body = reply.status === 200 ? await reply.json() : undefined;
    return body?.flows === label ? body : undefined;
  });
  expect(answer).toMatchObject({ secret: `secret-of-${label}`, snapEnv: "from-the-instance" });
  const reply = await server.request("POST", `/api/v1/projects/${instanceId}/snapshots`, {
    token: owner.token,
    body: { name },
  });
  expect(reply.status, reply.text).toBe(200);
  // The instance's stack's Node-RED (4.x: the device runs on Node 20).
  expect(reply.body.modules).toMatchObject({ "node-red": expect.stringMatching(/^4\./) });
  return reply.body.id as string;
}

describe.skipIf(!agentPackage)("the real FlowFuse device agent", () => {
  beforeAll(async () => {
    await agents.install();
    server = await startServer({ instances: true });
    owner = await makeUser(server);
    team = await createTeam(server, owner);
    instanceId = await createInstance(server, owner, team.id);
    const running = async () => {
      const reply = await server.request("GET", `/api/v1/projects/${instanceId}`, {
        token: owner.token,
      });
      return reply.body.meta.state === "running" ? reply.body : undefined;
    };
    await until("the instance running", running);
    // The instance's variable, which its Node-RED gets once restarted.
    const set = await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
      body: { settings: { env: [{ name: "FROM_SNAPSHOT", value: "from-the-instance" }] } },
    });
    expect(set.status, set.text).toBe(200);
    const restarted = await server.request(
      "POST",
      `/api/v1/projects/${instanceId}/actions/restart`,
      {
        token: owner.token,
      },
    );
    expect(restarted.status, restarted.text).toBe(200);
    instanceUrl = (await until("the instance running again", running)).url;
  }, 240_000);

  afterAll(async () => {
    await agents.close();
    await server?.close();
  }, 60_000);

  test("runs a target snapshot of a running hosted instance, credentials and variables decrypted; a second one replaces it; a snapshot of the device holds what it runs", async () => {
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "line-1", type: "Raspberry Pi", team: team.id, instance: instanceId },
    });
    expect(created.status, created.text).toBe(200);
    const device = created.body;
    await server.request("PUT", `/api/v1/devices/${device.id}/settings`, {
      token: owner.token,
      body: { env: [{ name: "FROM_SETTINGS", value: "from-settings" }] },
    });
    const agent = await startAgent({
      deviceId: device.id,
      token: device.credentials.token,
      credentialSecret: device.credentials.credentialSecret,
      forgeURL: server.url,
      intervalJitter: 1,
    });

    const first = await snapshotOfRunning("first", "one");
    const set = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { targetSnapshot: first },
    });
    expect(set.status, set.text).toBe(200);
    expect(await helloOf(agent, "one")).toEqual({
      flows: "one",
      device: "line-1",
      snapshot: first,
      snapEnv: "from-the-instance",
      settingsEnv: "from-settings",
      secret: "secret-of-one",
    });

    const second = await snapshotOfRunning("second", "two");
    await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { targetSnapshot: second },
    });
    expect(await helloOf(agent, "two", 60_000)).toMatchObject({
      snapshot: second,
      secret: "secret-of-two",
    });
    // The agent reports it: the platform sees it running the second snapshot.
    const deadline = Date.now() + 30_000;
    let seen;
    do {
      seen = await server.request("GET", `/api/v1/devices/${device.id}`, { token: owner.token });
      if (seen.body.activeSnapshot?.id === second && seen.body.status === "running") break;
      await new Promise((done) => setTimeout(done, 250));
    } while (Date.now() < deadline);
    expect(seen.body).toMatchObject({
      status: "running",
      onlineStatus: "online",
      agentVersion: "4.2.1",
      activeSnapshot: { id: second },
      isDeploying: false,
    });

    // A snapshot of what the running device runs: the instance's, as the device is the instance's.
    const ofDevice = await server.request("POST", `/api/v1/devices/${device.id}/snapshot`, {
      token: owner.token,
      body: { name: "from line-1" },
    });
    expect(ofDevice.status, ofDevice.text).toBe(200);
    expect(ofDevice.body).toMatchObject({
      ownerType: "instance",
      projectId: instanceId,
      modules: { "node-red": seen.body.nodeRedVersion },
    });
    const full = await server.request("GET", `/api/v1/snapshots/${ofDevice.body.id}/full`, {
      token: owner.token,
    });
    expect(full.body.flows.flows.find((n: { type: string }) => n.type === "tab").label).toBe("two");
    expect(full.body.settings.env).toMatchObject({
      FROM_SNAPSHOT: "from-the-instance",
      FROM_SETTINGS: "from-settings",
    });
    const exported = await server.request("POST", `/api/v1/snapshots/${ofDevice.body.id}/export`, {
      token: owner.token,
      body: { credentialSecret: "the operator's secret" },
    });
    expect(
      decryptCredentials("the operator's secret", exported.body.flows.credentials),
    ).toMatchObject({ cfg1: { map: { SECRET: "secret-of-two" } } });
    await stopAgent(agent);
  }, 300_000);

  test("an application's device starts Node-RED once on its first target, and once on the next", async () => {
    const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
    });
    const applicationId = instance.body.application.id as string;
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "line-app", type: "Raspberry Pi", team: team.id, application: applicationId },
    });
    expect(created.status, created.text).toBe(200);
    const device = created.body;
    const agent = await startAgent({
      deviceId: device.id,
      token: device.credentials.token,
      credentialSecret: device.credentials.credentialSecret,
      forgeURL: server.url,
      intervalJitter: 1,
    });
    const starts = () => agent.output.join("").split("Starting Node-RED").length - 1;

    const first = await snapshotOfRunning("for the application's device", "five");
    const set = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { targetSnapshot: first },
    });
    expect(set.status, set.text).toBe(200);
    expect(await helloOf(agent, "five")).toMatchObject({ device: "line-app", snapshot: first });
    // Several check-ins later (every second or two), it still runs the one it started.
    await new Promise((done) => setTimeout(done, 8_000));
    expect(starts(), agent.output.join("").slice(-3000)).toBe(1);
    const seen = await server.request("GET", `/api/v1/devices/${device.id}`, {
      token: owner.token,
    });
    expect(seen.body).toMatchObject({ status: "running", activeSnapshot: { id: first } });

    // A new target: one update, one start.
    const second = await snapshotOfRunning("next for the application's device", "six");
    await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { targetSnapshot: second },
    });
    expect(await helloOf(agent, "six", 90_000)).toMatchObject({ snapshot: second });
    await new Promise((done) => setTimeout(done, 8_000));
    expect(starts(), agent.output.join("").slice(-3000)).toBe(2);
    await stopAgent(agent);
  }, 300_000);

  test("a provisioning token starts a device that registers itself and runs the instance's device target", async () => {
    const target = await snapshotOfRunning("for provisioned", "three");
    await server.request("POST", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: owner.token,
      body: { targetSnapshot: target },
    });
    const token = await server.request("POST", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
      body: { name: "line 2", instance: instanceId },
    });
    expect(token.status, token.text).toBe(200);
    const agent = await startAgent({
      provisioningMode: true,
      provisioningTeam: team.id,
      provisioningToken: token.body.token,
      forgeURL: server.url,
      intervalJitter: 1,
    });
    const answer = await helloOf(agent, "three");
    expect(answer).toMatchObject({ snapshot: target, secret: "secret-of-three" });
    const all = await server.request("GET", `/api/v1/teams/${team.id}/devices`, {
      token: owner.token,
    });
    const provisioned = all.body.devices.find(
      (d: { type: string }) => d.type === "Auto Provisioned",
    );
    expect(provisioned).toMatchObject({ ownerType: "instance", instance: { id: instanceId } });
    expect(answer.device).toBe(provisioned.name);
    // Its check of the base URL with the token, before it provisioned: 204, not the sign-in page.
    const probes = server.logs
      .flatMap((line) => line.split("\n"))
      .filter((line) => line.includes('"msg":"request"') && line.includes('"url":"/"'))
      .map((line) => JSON.parse(line).status);
    expect(probes).toContain(204);
    expect(probes).not.toContain(303);
    await stopAgent(agent);
  }, 300_000);

  test.skipIf(!existsSync("/usr/bin/script"))(
    "registers from its own terminal (its interactive setup): a person completes the page, and the agent sets itself up with the code it is handed",
    async () => {
      const person = await server.userWithPassword();
      const sid = await server.signIn(person.username, person.password);
      const ownTeam = await server.asSession(sid, "POST", "/api/v1/teams", {
        body: { name: `Terminal ${Math.random().toString(36).slice(2, 7)}` },
      });
      expect(ownTeam.status, ownTeam.text).toBe(200);
      const dir = await deviceDir();
      // The prompts need a terminal: util-linux's `script` gives the agent one, fed from a pipe.
      const command = [process.execPath, ...(await setupArgs(dir))]
        .map((arg) => `'${arg.replace(/'/g, "'\\''")}'`)
        .join(" ");
      const child = spawn("script", ["-qfec", command, "/dev/null"], {
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...agentEnv(), TERM: "xterm", COLUMNS: "200" },
      });
      const agent = agents.track({ process: child, port: 0, dir, output: [] });
      child.stdout!.on("data", (chunk: Buffer) => agent.output.push(chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => agent.output.push(chunk.toString()));
      // eslint-disable-next-line no-control-regex
      const screen = () => agent.output.join("").replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");
      const shown = (text: string | RegExp) =>
        until(
          `the agent to show ${text}`,
          async () => {
            const found = typeof text === "string" ? screen().includes(text) : text.exec(screen());
            return found ? found : undefined;
          },
          60_000,
        );

      await shown("Enter the URL of your FlowFuse platform");
      child.stdin!.write(`${server.url}\r`);
      await shown("Are you registering a new instance");
      child.stdin!.write("\r"); // the first choice: register as a new instance
      await shown("press ENTER to open your browser");
      child.stdin!.write("\r");
      const link = (await shown(/\/register\/remote-instance\/fpr_\w+/)) as RegExpExecArray;

      // The person opens the link, signed in, and confirms.
      const done = await server.page("POST", link[0], {
        sid,
        form: { owner: ownTeam.body.id, name: "from-the-terminal" },
      });
      expect(done.status, done.html).toBe(200);

      await shown("Successfully registered as from-the-terminal");
      const exited = await new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) resolve(child.exitCode);
        else child.once("exit", (code) => resolve(code));
      });
      expect(exited, screen().slice(-2000)).toBe(0);
      const yml = await readFile(join(dir, "device.yml"), "utf8");
      expect(yml).toMatch(/^token: fpd_/m);
      expect(yml).toContain(`forgeURL: ${server.url}`);
      const devices = await server.asSession(
        sid,
        "GET",
        `/api/v1/teams/${ownTeam.body.id}/devices`,
      );
      expect(devices.body.devices).toMatchObject([{ name: "from-the-terminal" }]);
      expect(yml).toContain(`deviceId: ${devices.body.devices[0].id}`);
    },
    180_000,
  );

  test("a one-time code sets a device up (--otc): the agent writes its device.yml and runs the device", async () => {
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "line-3", type: "Raspberry Pi", team: team.id, instance: instanceId },
    });
    expect(created.status, created.text).toBe(200);
    const device = created.body;
    const target = await snapshotOfRunning("for the code", "four");
    await server.request("POST", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: owner.token,
      body: { targetSnapshot: target },
    });

    // As an operator types it on the device, without prompts and without starting.
    const dir = await deviceDir();
    const setup = await setUpWithCode(dir, device.credentials.otc);
    expect(setup.stdout).toContain(`Successfully registered as line-3 (${device.id})`);
    const yml = await readFile(join(dir, "device.yml"), "utf8");
    expect(yml).toContain(`deviceId: ${device.id}`);
    expect(yml).toContain(`forgeURL: ${server.url}`);
    expect(yml).toContain("cliSetup: true");
    expect(yml).toMatch(/^token: fpd_/m);
    // The setup gave new credentials: the ones the device was created with are dead.
    expect(yml).not.toContain(device.credentials.token);

    // The code was used: a second setup is refused as the agent reports it.
    const again = await setUpWithCode(await deviceDir(), device.credentials.otc).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("One-Time Code is invalid or has already been used");

    const agent = await startAgent({ dir });
    expect(await helloOf(agent, "four")).toMatchObject({
      device: "line-3",
      snapshot: target,
      secret: "secret-of-four",
    });
    await stopAgent(agent);
  }, 300_000);
});
