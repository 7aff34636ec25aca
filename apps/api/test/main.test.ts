// The real entry point in a child process: first start, the initial token file, restarts, SIGTERM
// and configuration errors.
import { createTestDb, type TestDb, testDatabaseUrl } from "@flowplane/db/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { inheritedEnv } from "./env";

const root = join(import.meta.dirname, "..");

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => output, exited });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}:\n${output}`));
    });
  });
}

let dataDir: string;
let database: TestDb | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "flowplane-main-"));
  env = { DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", MQTT_PORT: "0" };
  if (testDatabaseUrl) {
    // A schema of its own in the test server, named through the connection's search_path.
    database = await createTestDb({ migrate: false });
    const schema = (database.config as { schema: string }).schema;
    const url = new URL(testDatabaseUrl);
    url.searchParams.set("options", `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
});
afterAll(async () => {
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the server process", () => {
  test("first start creates admin with a 0600 token file and an expired first password; logs the paths, never the values", async () => {
    const server = await start(env);
    try {
      const file = join(dataDir, "initial-admin-token");
      const info = await stat(file);
      expect(info.mode & 0o777).toBe(0o600);
      const token = (await readFile(file, "utf8")).trim();
      expect(token).toMatch(/^fpp_[0-9A-Za-z]{36}$/);

      const me = await fetch(`${server.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ username: "admin", admin: true });
      const teams = await fetch(`${server.url}/api/v1/teams`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(teams.status).toBe(200);

      expect(server.output()).toContain(file);
      expect(server.output()).not.toContain(token);

      // The first password: a 0600 file, named in the log, never its value; marked expired.
      const passwordFile = join(dataDir, "initial-admin-password");
      expect((await stat(passwordFile)).mode & 0o777).toBe(0o600);
      const password = (await readFile(passwordFile, "utf8")).trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect(server.output()).toContain(passwordFile);
      expect(server.output()).not.toContain(password);
      const login = await fetch(`${server.url}/account/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password }),
      });
      expect(login.status).toBe(200);
      expect(await login.json()).toEqual({ status: "okay", password_expired: true });
    } finally {
      server.child.kill("SIGTERM");
    }
    expect(await server.exited).toBe(0);
  });

  test("a later start neither recreates the admin nor touches the token file; the token still works", async () => {
    const file = join(dataDir, "initial-admin-token");
    const before = await stat(file);
    const token = (await readFile(file, "utf8")).trim();
    const server = await start(env);
    try {
      expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
      expect((await readFile(file, "utf8")).trim()).toBe(token);
      const me = await fetch(`${server.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      expect(server.output()).not.toContain("created the administrator");
    } finally {
      server.child.kill("SIGTERM");
    }
    expect(await server.exited).toBe(0);
  });

  test("SIGTERM lets a request in flight finish, then exits 0", async () => {
    const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
    const server = await start(env);
    const body = JSON.stringify({ name: "In Flight" });
    // Headers and half the body go out before the signal, the rest after it.
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/api/v1/teams`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on("error", reject);
      request.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill("SIGTERM");
        setTimeout(() => request.end(body.slice(10)), 300);
      }, 300);
    });
    const { status, text } = await reply;
    expect(status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ name: "In Flight" });
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  test.skipIf(!testDatabaseUrl)(
    "with WORKERS=2 two processes serve one port, and SIGTERM stops them all with exit 0",
    async () => {
      const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
      const server = await start({
        ...env,
        WORKERS: "2",
        BROKER_MODE: "off",
        INSTANCE_DRIVER: "off",
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(server.output().match(/listening at/g)?.length).toBe(2);
      for (let i = 0; i < 10; i++) {
        const reply = await fetch(`${server.url}/api/v1/user`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(reply.status).toBe(200);
      }
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    },
  );

  test("a configuration error stops the start with a clear message (exit 1)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: {
        ...inheritedEnv,
        DATA_DIR: dataDir,
        PORT: "not-a-port",
        DATABASE_URL: "mysql://x",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("Invalid configuration");
    expect(stderr).toContain("PORT");
    expect(stderr).toContain("DATABASE_URL");
  });
});
