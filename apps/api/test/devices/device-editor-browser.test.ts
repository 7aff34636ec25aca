// The remote editor end to end: the real FlowFuse device agent (4.2.1, MQTT to the embedded
// broker, `-i 300` so that only the live channel drives it) runs a snapshot of its application
// whose /hello answers "v1"; developer mode and the editor are turned on through the API (the agent
// opens its tunnel); Chromium opens the editor through the platform (its sign-in page, then the
// device's own editor host), the Node-RED editor loads through the tunnel, the browser deploys a
// changed flow from it, and the device's Node-RED answers /hello with the new flow. The agent
// installs node-red with npm on its first snapshot (~20 s); without its package the test skips
// (CI fails instead), as without Chromium.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserMissing, launchBrowser, openBrowser, signInOnPage } from "../support/browser";
import { deviceAgentPackage, inCI, inheritedEnv } from "../support/env";
import { freePort, startServer, type TestServer } from "../support/harness";
import { waiter } from "../support/until";

const PACKAGE = "flowfuse-device-agent-4.2.1.tgz";
const agentPackage = [deviceAgentPackage, join("/work/shared/clients", PACKAGE)].find(
  (path): path is string => path !== undefined && existsSync(path),
);
if (!agentPackage && inCI) {
  throw new Error(`the device agent's package (${PACKAGE}) is not found: set DEVICE_AGENT_TGZ`);
}

const run = promisify(execFile);
const until = waiter(180_000, 250);

/** GET /hello answers `label`. */
const flows = (label: string) => [
  { id: "tab1", type: "tab", label },
  { id: "in1", type: "http in", z: "tab1", url: "/hello", method: "get", wires: [["chg1"]] },
  {
    id: "chg1",
    type: "change",
    z: "tab1",
    rules: [{ t: "set", p: "payload", pt: "msg", to: label, tot: "str" }],
    wires: [["out1"]],
  },
  { id: "out1", type: "http response", z: "tab1", statusCode: "", headers: {}, wires: [] },
];

let server: TestServer;
let browser: Browser | undefined;
let installDir: string;
let deviceDir: string;
let agent: ChildProcess | undefined;
const output: string[] = [];

async function stopAgent() {
  if (!agent || agent.exitCode !== null || agent.signalCode !== null) return;
  const exited = new Promise((done) => agent!.once("exit", done));
  process.kill(-agent.pid!, "SIGTERM");
  const timer = setTimeout(() => {
    try {
      process.kill(-agent!.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }, 15_000);
  await exited;
  clearTimeout(timer);
}

describe.skipIf(!agentPackage || browserMissing)("the remote editor in a browser", () => {
  beforeAll(async () => {
    installDir = await mkdtemp(join(tmpdir(), "flowplane-agent-"));
    deviceDir = await mkdtemp(join(tmpdir(), "flowplane-device-"));
    await writeFile(join(installDir, "package.json"), '{"name":"agent-install","private":true}');
    await run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", agentPackage!], {
      cwd: installDir,
      env: { ...inheritedEnv, npm_config_cache: join(installDir, "npm-cache") },
    });
    const port = await freePort();
    server = await startServer({
      broker: "embedded",
      instances: "in-memory",
      port,
      baseUrl: `http://127.0.0.1:${port}`,
    });
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await stopAgent();
    await browser?.close();
    await server?.close();
    for (const dir of [installDir, deviceDir]) {
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a member opens the device's editor through the platform and deploys from it", async () => {
    // The person who opens the editor owns the team (owners and members may use it).
    const person = await server.userWithPassword();
    const sid = await server.signIn(person.username, person.password);
    const owner = {
      request: (method: string, path: string, body?: unknown) =>
        server.asSession(sid, method, path, { body }),
    };
    const team = await owner.request("POST", "/api/v1/teams", { name: "Field" });
    expect(team.status, team.text).toBe(200);
    const teamId = team.body.id as string;
    const application = await owner.request("POST", "/api/v1/applications", {
      name: "Line",
      teamId,
    });
    expect(application.status, application.text).toBe(200);
    const created = await owner.request("POST", "/api/v1/devices", {
      name: "bench-pi",
      team: teamId,
      application: application.body.id,
    });
    expect(created.status, created.text).toBe(200);
    const deviceId = created.body.id as string;
    const credentials = created.body.credentials;
    const imported = await owner.request("POST", "/api/v1/snapshots/import", {
      ownerId: deviceId,
      ownerType: "device",
      snapshot: { name: "v1", flows: { flows: flows("v1") }, settings: {} },
      credentialSecret: "not needed here",
    });
    expect(imported.status, imported.text).toBe(200);
    const target = await owner.request("PUT", `/api/v1/devices/${deviceId}`, {
      targetSnapshot: imported.body.id,
    });
    expect(target.status, target.text).toBe(200);

    const yaml = {
      deviceId,
      forgeURL: server.url,
      token: credentials.token,
      credentialSecret: credentials.credentialSecret,
      brokerURL: credentials.broker.url,
      brokerUsername: credentials.broker.username,
      brokerPassword: credentials.broker.password,
    };
    await writeFile(
      join(deviceDir, "device.yml"),
      `${Object.entries(yaml)
        .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
        .join("\n")}\n`,
      { mode: 0o600 },
    );
    const nodeRedPort = await freePort();
    agent = spawn(
      process.execPath,
      [
        join(installDir, "node_modules/@flowfuse/device-agent/index.js"),
        ...["--dir", deviceDir, "--port", String(nodeRedPort), "-i", "300", "--no-interactive"],
      ],
      {
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...inheritedEnv, npm_config_cache: join(installDir, "npm-cache") },
      },
    );
    agent.stdout!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    agent.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const hello = (label: string) =>
      until(`the device answering ${label}`, async () => {
        if (agent!.exitCode !== null) throw new Error(`the agent exited:\n${output.join("")}`);
        const reply = await fetch(`http://127.0.0.1:${nodeRedPort}/hello`).catch(() => undefined);
        return reply?.status === 200 && (await reply.text()) === label ? true : undefined;
      }).catch((error: Error) => {
        throw new Error(`${error.message}; agent output:\n${output.join("").slice(-3000)}`);
      });
    await hello("v1");

    const mode = await owner.request("PUT", `/api/v1/devices/${deviceId}/mode`, {
      mode: "developer",
    });
    expect(mode.body).toEqual({ mode: "developer" });
    const editor = await owner.request("PUT", `/api/v1/devices/${deviceId}/editor`, {
      enabled: true,
    });
    expect(editor.status, `${editor.text}\n${output.join("").slice(-2000)}`).toBe(200);
    expect(editor.body).toMatchObject({ enabled: true, connected: true });

    const { page, context } = await openBrowser(browser!);
    page.setDefaultTimeout(60_000);
    await page.goto(editor.body.url as string);
    await signInOnPage(page, person.username, person.password);
    // The Node-RED editor, through the tunnel, on the device's own host.
    await page.locator("#red-ui-header").waitFor();
    expect(new URL(page.url()).hostname).toMatch(/^0-device-[0-9a-f]+\.localhost$/);
    await page.locator(".red-ui-deploy-button, #red-ui-header-button-deploy").first().waitFor();
    // The platform's session never reaches the editor's host; the editor's cookie is its own.
    const cookies = await context.cookies(page.url());
    expect(cookies.map((c) => c.name)).toEqual(["fp_device_editor"]);
    expect(cookies[0]!.httpOnly).toBe(true);

    // Deployed from the editor's page, as its Deploy button sends it.
    const status = await page.evaluate(
      async (body) => {
        const reply = await fetch("flows", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "Node-RED-API-Version": "v1",
            "Node-RED-Deployment-Type": "full",
          },
          body,
        });
        return reply.status;
      },
      JSON.stringify(flows("v2")),
    );
    expect(status).toBeLessThan(300);
    await hello("v2");
    await context.close();
  }, 600_000);
});
