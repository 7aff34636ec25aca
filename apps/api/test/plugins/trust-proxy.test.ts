// TRUST_PROXY: behind the proxies it names, the client's address is the one they forwarded in
// X-Forwarded-For (the right-most address no trusted hop vouches for) — counted by the rate
// limits, recorded, logged; without it the header is ignored, so a client cannot spoof its way
// past a limit. And docs/operations.md's nginx recipe, as written there, in front of a platform:
// TLS, a GET, the events stream, MQTT over WebSocket, the client's address.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { InstanceIsolation } from "@flowplane/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { clientAddressOf, loadConfig } from "../../src/env";
import { warnOnTrustedLoopback } from "../../src/start-reports";
import { inCI } from "../support/env";
import { freePort, type Reply, startServer, type TestServer } from "../support/harness";
import { closeAll, connectMqtt, inbox } from "../support/mqtt-client";
import { createBrokerClient, createTeam } from "../support/team-fixtures";

/** Two registrations per address in a minute: the third is 429. */
const LIMIT = { deviceRegistration: { max: 2, windowMs: 60_000 } };

let trusting: TestServer;
let direct: TestServer;
beforeAll(async () => {
  [trusting, direct] = await Promise.all([
    startServer({ trustProxy: ["127.0.0.1"], rateLimits: LIMIT, broker: "embedded" }),
    startServer({ rateLimits: LIMIT }),
  ]);
});
afterAll(() => Promise.all([trusting?.close(), direct?.close()]));

/** A device's anonymous registration (limited per client address, which it records). */
const register = (server: TestServer, forwardedFor?: string): Promise<Reply> =>
  server.request("POST", "/api/v1/devices/_/register", {
    token: null,
    body: {},
    headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {},
  });

/** The addresses the registrations recorded, oldest first. */
async function recorded(server: TestServer): Promise<(string | null)[]> {
  const rows = await server.db
    .selectFrom("device_registrations")
    .select(["requested_from", "created_at"])
    .orderBy("created_at")
    .execute();
  return rows.map((row) => row.requested_from);
}

describe("behind a trusted proxy (TRUST_PROXY=127.0.0.1)", () => {
  test("the forwarded client address is the one counted, recorded and logged", async () => {
    expect((await register(trusting, "203.0.113.7")).status).toBe(200);
    expect((await register(trusting, "203.0.113.7")).status).toBe(200);
    const refused = await register(trusting, "203.0.113.7");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    // Another client behind the same proxy has a count of its own.
    expect((await register(trusting, "203.0.113.8")).status).toBe(200);
    expect((await recorded(trusting)).slice(-3)).toEqual([
      "203.0.113.7",
      "203.0.113.7",
      "203.0.113.8",
    ]);
    expect(trusting.logs.some((line) => line.includes('"ip":"203.0.113.7"'))).toBe(true);
  });

  test("an address a client prepended beyond the trusted hop is ignored: the right-most untrusted one counts", async () => {
    // The proxy appends the address it saw (203.0.113.9) to whatever the client sent.
    for (const forged of ["198.51.100.1", "198.51.100.2"]) {
      expect((await register(trusting, `${forged}, 203.0.113.9`)).status).toBe(200);
    }
    expect((await register(trusting, "198.51.100.3, 203.0.113.9")).status).toBe(429);
    expect((await recorded(trusting)).slice(-2)).toEqual(["203.0.113.9", "203.0.113.9"]);
  });
});

test("the audit log keeps the forwarded address of each change; administrators see it, the team's owner does not", async () => {
  const owner = await trusting.user();
  const team = await createTeam(trusting, { token: owner.token } as never);
  const from = (address: string) => ({ "x-forwarded-for": address });
  // A rename (the one statement that writes the team and its entry) and an ordinary audited write.
  const renamed = await trusting.request("PUT", `/api/v1/teams/${team.id}`, {
    token: owner.token,
    body: { name: "Renamed behind the proxy" },
    headers: from("203.0.113.20"),
  });
  expect(renamed.status, renamed.text).toBe(200);
  const created = await trusting.request("POST", "/api/v1/applications", {
    token: owner.token,
    body: { name: "Behind the proxy", teamId: team.id },
    headers: from("203.0.113.21"),
  });
  expect(created.status, created.text).toBe(200);

  const log = async (token: string) => {
    const reply = await trusting.request("GET", `/api/v1/teams/${team.id}/audit-log`, { token });
    expect(reply.status, reply.text).toBe(200);
    const triggers = new Map<string, Record<string, unknown>>();
    for (const entry of reply.body.log) triggers.set(entry.event, entry.trigger);
    return triggers;
  };
  const asAdmin = await log(trusting.adminToken);
  expect(asAdmin.get("team.settings.updated")).toMatchObject({ id: owner.id, ip: "203.0.113.20" });
  expect(asAdmin.get("application.created")).toMatchObject({ id: owner.id, ip: "203.0.113.21" });
  const asOwner = await log(owner.token);
  expect(asOwner.get("application.created")).toMatchObject({ id: owner.id });
  expect(asOwner.get("application.created")).not.toHaveProperty("ip");
  expect(asOwner.get("team.settings.updated")).not.toHaveProperty("ip");
});

describe("without TRUST_PROXY", () => {
  test("X-Forwarded-For is ignored: forged addresses share the socket's one limit", async () => {
    expect((await register(direct, "203.0.113.10")).status).toBe(200);
    expect((await register(direct, "203.0.113.11")).status).toBe(200);
    expect((await register(direct, "203.0.113.12")).status).toBe(429);
    expect(await recorded(direct)).toEqual(["127.0.0.1", "127.0.0.1"]);
    expect(direct.logs.some((line) => line.includes("203.0.113."))).toBe(false);
  });
});

test("a WebSocket upgrade before Fastify (MQTT over WebSocket) takes its client's address the same way", () => {
  const upgrade = (forwardedFor: string) =>
    ({
      socket: { remoteAddress: "127.0.0.1" },
      headers: { "x-forwarded-for": forwardedFor },
    }) as unknown as IncomingMessage;
  expect(clientAddressOf(upgrade("198.51.100.1, 203.0.113.5"), ["127.0.0.1"])).toBe("203.0.113.5");
  expect(clientAddressOf(upgrade("198.51.100.1, 203.0.113.5"), 2)).toBe("198.51.100.1");
  expect(clientAddressOf(upgrade("203.0.113.5"), false)).toBe("127.0.0.1");
});

describe("TRUST_PROXY's values", () => {
  const trustOf = (value: string) => loadConfig({ TRUST_PROXY: value }).TRUST_PROXY;

  test("unset or false: none; a number: hops; else addresses, CIDRs and proxy-addr's names", () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(trustOf("false")).toBe(false);
    expect(trustOf("2")).toBe(2);
    expect(trustOf("127.0.0.1, 10.0.0.0/8,loopback")).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "loopback",
    ]);
  });

  test("true (any client's header believed) and what is not an address are configuration errors", () => {
    expect(() => trustOf("true")).toThrow(
      /TRUST_PROXY: true would take any client's X-Forwarded-For/,
    );
    expect(() => trustOf("10.0.0.0/8,proxy.example.com")).toThrow(
      /TRUST_PROXY: invalid IP address: proxy\.example\.com/,
    );
  });
});

describe("a start's warning: loopback trusted while instances share the host's network", () => {
  const shared: InstanceIsolation = {
    mode: "none",
    user: "platform",
    required: false,
    network: "host",
  };
  const own: InstanceIsolation = { ...shared, mode: "sandbox", network: "own" };
  const warned = (trust: string, isolation: InstanceIsolation | undefined) => {
    const lines: string[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    warnOnTrustedLoopback(loadConfig({ TRUST_PROXY: trust }).TRUST_PROXY, isolation, log);
    return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
  };

  test.each([
    ["127.0.0.1", /trusts loopback/],
    ["loopback", /trusts loopback/],
    ["::1,10.0.0.0/8", /trusts loopback/],
    ["1", /hop count/],
  ])("TRUST_PROXY=%s with instances on the host's network", (trust, message) => {
    const said = warned(trust, shared);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(message);
  });

  test("not when instances have their own network, trust is elsewhere, or nothing is hosted", () => {
    expect(warned("127.0.0.1", own)).toEqual([]);
    expect(warned("1", own)).toEqual([]);
    expect(warned("10.1.2.3", shared)).toEqual([]);
    expect(warned("", shared)).toEqual([]);
    expect(warned("127.0.0.1", undefined)).toEqual([]);
  });
});

const run = promisify(execFile);
const NGINX = "/usr/sbin/nginx";
const nginxMissing = await run(NGINX, ["-v"]).then(
  () => undefined,
  () => `${NGINX} is not installed (apt-get install nginx)`,
);
if (nginxMissing) console.warn(`skipped: docs/operations.md's nginx recipe: ${nginxMissing}`);

/** The recipe's nginx block, as docs/operations.md gives it under "Behind a reverse proxy". */
async function documentedRecipe(): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, "../../../../docs/operations.md"), "utf8");
  const section = doc.split("\n## Behind a reverse proxy\n")[1]!.split("\n## ")[0]!;
  const blocks = [...section.matchAll(/```nginx\n([\s\S]*?)```/g)];
  expect(blocks, "one nginx block in the section").toHaveLength(1);
  return blocks[0]![1]!;
}

/** `text` with `from` replaced by `to`, which must be there (the recipe changed: say so). */
function replaced(text: string, from: string | RegExp, to: string): string {
  expect(text, `the recipe has ${String(from)}`).toMatch(from);
  return text.replace(from, to);
}

/** A request through nginx (TLS, our certificate) from `localAddress`, as a remote client. */
function viaNginx(
  port: number,
  ca: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: options.method ?? "GET",
        ca,
        servername: "flowplane.example.com",
        // Not nginx's own address, which the platform trusts: a client elsewhere.
        localAddress: "127.0.0.2",
        headers: { host: "flowplane.example.com", ...options.headers },
      },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, body }));
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

/** Resolves once something accepts connections at the port (nginx has started). */
async function accepting(port: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    if (gone) throw new Error("nginx exited");
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

// In CI nginx is installed (.ci/run): a missing one fails there rather than skip.
describe.skipIf(!!nginxMissing && !inCI)(
  `docs/operations.md's nginx recipe, in front of the platform${nginxMissing ? ` (skipped: ${nginxMissing})` : ""}`,
  () => {
    let dir: string;
    let nginx: ChildProcess | undefined;
    let exited: Promise<unknown>;
    let port: number;
    let ca: string;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "flowplane-nginx-"));
      await run("openssl", [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", join(dir, "privkey.pem"), "-out", join(dir, "fullchain.pem"), "-days", "1"],
        ...["-subj", "/CN=flowplane.example.com"],
        ...[
          "-addext",
          "subjectAltName=DNS:flowplane.example.com,DNS:*.editors.example.net,IP:127.0.0.1",
        ],
      ]);
      ca = await readFile(join(dir, "fullchain.pem"), "utf8");
      const [httpPort, httpsPort] = [await freePort(), await freePort()];
      port = httpsPort;
      const upstream = new URL(trusting.url).host;
      let site = await documentedRecipe();
      // Where this test runs: loopback ports of its own, its certificate, the test platform.
      site = replaced(site, /^ *listen \[::\]:80;\n/m, "");
      site = replaced(site, /^ *listen \[::\]:443 ssl http2;\n/m, "");
      site = replaced(site, "listen 80;", `listen 127.0.0.1:${httpPort};`);
      site = replaced(site, "listen 443 ssl", `listen 127.0.0.1:${httpsPort} ssl`);
      site = replaced(site, "/etc/ssl/flowplane/", `${dir}/`);
      site = replaced(site, "/etc/ssl/flowplane/", `${dir}/`);
      site = replaced(site, "proxy_pass http://127.0.0.1:3000;", `proxy_pass http://${upstream};`);
      const conf = join(dir, "nginx.conf");
      await writeFile(
        conf,
        [
          "daemon off;",
          `pid ${dir}/nginx.pid;`,
          `error_log ${dir}/error.log;`,
          "events { worker_connections 64; }",
          "http {",
          `  access_log ${dir}/access.log;`,
          ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(
            (kind) => `  ${kind}_temp_path ${dir}/${kind};`,
          ),
          site,
          "}",
        ].join("\n"),
      );
      nginx = spawn(NGINX, ["-p", dir, "-c", conf, "-e", join(dir, "error.log")], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      nginx.stderr!.on("data", (chunk: Buffer) => (stderr += chunk));
      exited = new Promise((resolve) => nginx!.on("exit", resolve));
      await accepting(httpsPort, exited).catch(async (error: unknown) => {
        const log = await readFile(join(dir, "error.log"), "utf8").catch(() => "");
        throw new Error(`${String(error)}: ${stderr}${log}`);
      });
    }, 30_000);

    afterAll(async () => {
      await closeAll();
      if (nginx?.exitCode === null) {
        nginx.kill("SIGTERM");
        await exited;
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const admin = () => ({ authorization: `Bearer ${trusting.adminToken}` });

    test("a GET passes; the address counted and recorded is the client's, also when it forges X-Forwarded-For", async () => {
      const me = await viaNginx(port, ca, "/api/v1/user", { headers: admin() });
      expect(me.status, me.body).toBe(200);
      expect(JSON.parse(me.body)).toMatchObject({ username: "admin" });
      const registration = (forged?: string) =>
        viaNginx(port, ca, "/api/v1/devices/_/register", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(forged && { "x-forwarded-for": forged }),
          },
          body: "{}",
        });
      expect((await registration()).status).toBe(200);
      expect((await registration("203.0.113.77")).status).toBe(200);
      // The same client, whatever it forged: its own count, which is spent.
      expect((await registration("203.0.113.78")).status).toBe(429);
      expect((await recorded(trusting)).slice(-2)).toEqual(["127.0.0.2", "127.0.0.2"]);
    });

    test("the events stream passes at once (no buffering), through TLS", async () => {
      const team = await createTeam(trusting, { token: trusting.adminToken } as never);
      let received = "";
      const wake = new Set<() => void>();
      const seen = (text: string) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (!received.includes(text)) return;
            wake.delete(check);
            resolve();
          };
          wake.add(check);
          check();
        });
      const stream = httpsRequest({
        host: "127.0.0.1",
        port,
        path: `/api/v1/teams/${team.id}/events`,
        ca,
        servername: "flowplane.example.com",
        headers: { host: "flowplane.example.com", accept: "text/event-stream", ...admin() },
      });
      stream.on("response", (response) => {
        expect(response.statusCode).toBe(200);
        expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
        response.on("data", (chunk: Buffer) => {
          received += chunk;
          for (const check of [...wake]) check();
        });
      });
      stream.end();
      try {
        // The stream's first comment: it has started, through nginx.
        await seen(": open");
        const renamed = Date.now();
        const reply = await trusting.request("PUT", `/api/v1/teams/${team.id}`, {
          token: trusting.adminToken,
          body: { name: "Renamed behind nginx" },
        });
        expect(reply.status, reply.text).toBe(200);
        await seen("event: team.settings.updated");
        expect(received).toContain("Renamed behind nginx");
        // The runner numbers events every 250 ms: what nginx adds is nothing like a buffer's wait.
        expect(Date.now() - renamed).toBeLessThan(5_000);
      } finally {
        stream.destroy();
      }
    });

    test("a WebSocket upgrade passes: MQTT over WebSocket, both ways", async () => {
      const team = await createTeam(trusting, { token: trusting.adminToken } as never);
      const username = await createBrokerClient(trusting, { token: trusting.adminToken }, team.id);
      const client = await connectMqtt(`${username}@${team.id}`, {
        url: `wss://127.0.0.1:${port}/mqtt`,
        password: "walked-client-secret",
        ca,
        servername: "flowplane.example.com",
      });
      const messages = inbox(client);
      await client.subscribeAsync("proxy/#", { qos: 1 });
      await client.publishAsync("proxy/hello", "through nginx", { qos: 1 });
      await messages.until("proxy/hello");
      await client.endAsync();
    });
  },
);
