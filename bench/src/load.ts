// Load with autocannon: one scenario against one target, over keep-alive connections on loopback.
// Latencies are taken from every response (any status) with sub-millisecond precision, rather than
// from autocannon's millisecond histogram of 2xx responses.
import autocannon, { type Request, type Result } from "autocannon";
import type { CpuUsage } from "./cpu";

export type Context = Record<string, unknown>;

/** One request of a scenario. A connection repeats its scenario's steps in order. */
export interface Step {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** A fixed path, or one computed from what earlier steps of the same cycle captured. */
  path: string | ((context: Context) => string);
  /** Fixed headers, or headers made for each request (e.g. a fresh token). */
  headers: Record<string, string> | ((context: Context) => Record<string, string>);
  body?: string;
  /** The status a correct server answers. */
  expect: number;
  /** Reads the response, e.g. to remember an id for the next step. */
  capture?: (body: string, context: Context) => void;
}

export interface LoadResult {
  seconds: number;
  requests: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  statuses: Record<string, number>;
  /** Responses whose status is none of the scenario's expected ones. */
  unexpected: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  /** CPU used during the run, by process (filled in by the caller). */
  cpu?: CpuUsage;
}

function toRequest(step: Step): Request {
  const { path, headers } = step;
  const request: Request = { method: step.method, path: "/", headers: {} };
  if (step.body !== undefined) request.body = step.body;
  if (typeof path === "string") request.path = path;
  if (typeof headers !== "function") request.headers = headers;
  if (typeof path === "function" || typeof headers === "function") {
    request.setupRequest = (req, context) => ({
      ...req,
      ...(typeof path === "function" ? { path: path(context) } : {}),
      ...(typeof headers === "function" ? { headers: headers(context) } : {}),
    });
  }
  if (step.capture) {
    const capture = step.capture;
    request.onResponse = (_status, body, context) => capture(body, context);
  }
  return request;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `stepsOf(connection)` on each of `connections` connections for `duration` seconds. */
export async function load(options: {
  url: string;
  connections: number;
  duration: number;
  stepsOf: (connection: number) => Step[];
}): Promise<LoadResult> {
  const expected = new Set<number>();
  for (let c = 0; c < options.connections; c++) {
    for (const step of options.stepsOf(c)) expected.add(step.expect);
  }
  let nextConnection = 0;
  let latencies = new Float64Array(1 << 16);
  let count = 0;

  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.duration,
        pipelining: 1,
        timeout: 10,
        requests: options.stepsOf(0).map(toRequest),
        setupClient: (client) => {
          client.setRequests(
            options.stepsOf(nextConnection++ % options.connections).map(toRequest),
          );
        },
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => {
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = ms;
    });
  });

  const sorted = latencies.subarray(0, count).sort();
  let sum = 0;
  for (const ms of sorted) sum += ms;
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]),
  );
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const unexpected = Object.entries(statuses)
    .filter(([status]) => !expected.has(Number(status)))
    .reduce((a, [, n]) => a + n, 0);
  return {
    seconds: result.duration,
    requests,
    rps: requests / result.duration,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: count ? sorted[count - 1]! : 0,
      mean: count ? sum / count : 0,
    },
    statuses,
    unexpected,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
