// The real API server for the CLI's tests: a fresh database, the first administrator and its token,
// listening on a free loopback port.
import { buildApp, ensureInitialAdmin, INITIAL_TOKEN_FILE } from "@flowplane/api";
import { createTestDb } from "@flowplane/db/testing";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestServer {
  url: string;
  /** The administrator's first token (admin opt-in, every team, no expiry). */
  adminToken: string;
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const { db, drop } = await createTestDb();
  const dataDir = await mkdtemp(join(tmpdir(), "flowplane-cli-server-"));
  const secret = "x".repeat(40);
  await ensureInitialAdmin(db, secret, dataDir);
  const adminToken = (await readFile(join(dataDir, INITIAL_TOKEN_FILE), "utf8")).trim();
  const app = await buildApp({ db, tokenSecret: secret, baseUrl: "http://127.0.0.1:0" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adminToken,
    async close() {
      await app.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A loopback URL nothing listens on. */
export async function deadUrl(): Promise<string> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
