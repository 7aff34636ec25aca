// The in-process half of `pnpm bench:metrics` (src/metrics.ts): what recording a request costs,
// without the network, the database server or the load generator's noise. Two apps in this
// process over one in-memory PGlite, one without METRICS_TOKEN and one with it, each answering the
// same requests through Fastify's `inject` in blocks, alternating; the process's CPU time per
// request of each (both apps' background work falls on both sides alike). Two requests: GET
// /healthz (no database: the framework alone, where the recording's share is largest) and an
// authenticated GET /api/v1/user (a token checked in PGlite).
import { createDb, migrateToLatest } from "@flowplane/db";
import { buildApp, ensureInitialAdmin, INITIAL_TOKEN_FILE } from "@flowplane/api";
import { randomBase62 } from "@flowplane/auth";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface InProcessCost {
  path: string;
  status: number;
  requests: number;
  /** Median block's CPU µs per request. */
  offMicros: number;
  onMicros: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

export async function inProcessCost(options: {
  blocks: number;
  perBlock: number;
}): Promise<InProcessCost[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "flowplane-bench-metrics-inprocess-"));
  const db = await createDb({ kind: "pglite" });
  try {
    await migrateToLatest(db);
    const tokenSecret = randomBase62(48);
    await ensureInitialAdmin(db, tokenSecret, dataDir);
    const token = (await readFile(join(dataDir, INITIAL_TOKEN_FILE), "utf8")).trim();
    const base = { db, tokenSecret, baseUrl: "http://127.0.0.1:3000" };
    const apps = {
      off: await buildApp(base),
      on: await buildApp({ ...base, metricsToken: randomBase62(40) }),
    };
    const headers = { authorization: `Bearer ${token}` };
    const measure = async (path: string, status: number): Promise<InProcessCost> => {
      const block = async (side: "off" | "on", n: number) => {
        const started = process.cpuUsage();
        for (let i = 0; i < n; i++) {
          const reply = await apps[side].inject({ method: "GET", url: path, headers });
          if (reply.statusCode !== status) throw new Error(`GET ${path}: ${reply.statusCode}`);
        }
        const used = process.cpuUsage(started);
        return (used.user + used.system) / n;
      };
      for (let i = 0; i < 2; i++) for (const side of ["off", "on"] as const) await block(side, 500);
      const micros = { off: [] as number[], on: [] as number[] };
      for (let i = 0; i < options.blocks; i++) {
        const order = i % 2 ? (["on", "off"] as const) : (["off", "on"] as const);
        for (const side of order) micros[side].push(await block(side, options.perBlock));
      }
      return {
        path,
        status,
        requests: options.blocks * options.perBlock,
        offMicros: median(micros.off),
        onMicros: median(micros.on),
      };
    };
    try {
      return [await measure("/healthz", 200), await measure("/api/v1/user", 200)];
    } finally {
      await apps.off.close();
      await apps.on.close();
    }
  } finally {
    await db.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}
