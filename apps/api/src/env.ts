// The server's configuration: every environment variable it reads, parsed and checked in one place.
import type { IncomingMessage } from "node:http";
import { resolve } from "node:path";
import proxyAddr from "@fastify/proxy-addr";
import { z } from "zod";

/**
 * Which hops' forwarded headers are believed (Fastify's `trustProxy`): none, that many hops from
 * the socket, or the hops at these addresses, CIDRs or proxy-addr's names.
 */
export type TrustProxy = false | number | string[];

/** Whether proxy-addr believes a hop (`hop` 0 is the socket's address): as Fastify compiles it. */
export function trustFunction(
  trust: Exclude<TrustProxy, false>,
): (address: string, hop: number) => boolean {
  return typeof trust === "number" ? (_address, hop) => hop < trust : proxyAddr.compile(trust);
}

/** The client's address of a request Fastify does not see (a WebSocket upgrade), as request.ip. */
export function clientAddressOf(
  request: IncomingMessage,
  trust: TrustProxy = false,
): string | undefined {
  return trust === false ? request.socket.remoteAddress : proxyAddr(request, trustFunction(trust));
}

/** `MIN-MAX`, both ends included. */
const range = (fallback: string, message: string, description: string) =>
  z
    .string()
    .regex(/^\d{1,10}-\d{1,10}$/, message)
    .default(fallback)
    .transform((value) => {
      const [min, max] = value.split("-").map(Number) as [number, number];
      return { min, max };
    })
    .describe(description);

/** `MAX/SECONDS`, e.g. `5/30`: at most MAX in a window of SECONDS. */
const rateLimit = (fallback: string, description: string) =>
  z
    .string()
    .regex(/^[1-9]\d{0,8}\/[1-9]\d{0,6}$/, "must be MAX/SECONDS, e.g. 5/30")
    .default(fallback)
    .transform((text) => {
      const [max, seconds] = text.split("/").map(Number) as [number, number];
      return { max, windowMs: seconds * 1000 };
    })
    .describe(description);

const Env = z.object({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  BASE_URL: z
    .url()
    .optional()
    .describe("Public URL of the API, for links (default http://HOST:PORT)"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
    .optional()
    .describe("A PostgreSQL server of yours; without it the platform keeps its own (DATABASE)"),
  DATABASE: z
    .enum(["embedded-postgres", "pglite"])
    .optional()
    .describe(
      "Without DATABASE_URL: embedded-postgres (a PostgreSQL server the platform starts, data in DATA_DIR/postgres) or pglite (PostgreSQL compiled to WebAssembly, in-process, data in DATA_DIR/pglite); unset: the one DATA_DIR already holds, else embedded-postgres where it can run, else pglite",
    ),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DATA_DIR: z
    .string()
    .min(1)
    .default("./.data")
    // Absolute from here on: instances run in directories of their own, where a relative path
    // would lead somewhere else.
    .transform((path) => resolve(path))
    .describe("Where the platform keeps its files (0700: its own user only)"),
  FLOWPLANE_TOKEN_SECRET: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe("Key of the token digests; generated and kept in DATA_DIR when unset"),
  METRICS_TOKEN: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe(
      "Turns on GET /metrics (Prometheus' format), for `Authorization: Bearer <METRICS_TOKEN>` only; unset: no /metrics",
    ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Hosts (names or addresses) webhooks may point to though private or loopback (docs/webhooks.md). */
  WEBHOOK_ALLOWED_HOSTS: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean),
    ),
  CORS_ORIGINS: z
    .string()
    .transform((list) =>
      list
        .split(",")
        .map((origin) => origin.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .url({ protocol: /^https?$/ })
          .refine((url) => new URL(url).origin === url, "must be an origin: scheme://host[:port]"),
      ),
    )
    .default([])
    .describe("Comma-separated origins allowed to call the API from a browser; none by default"),
  TRUST_PROXY: z
    .string()
    .default("")
    .transform((value, ctx): TrustProxy => {
      const trimmed = value.trim();
      if (trimmed === "" || trimmed === "false") return false;
      if (/^\d+$/.test(trimmed)) return Number(trimmed);
      if (trimmed === "true") {
        ctx.addIssue({
          code: "custom",
          message:
            "true would take any client's X-Forwarded-For: name the proxy's addresses (e.g. 127.0.0.1,10.0.0.0/8) or a hop count",
        });
        return z.NEVER;
      }
      const hops = trimmed
        .split(",")
        .map((hop) => hop.trim())
        .filter(Boolean);
      try {
        proxyAddr.compile(hops);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
      return hops;
    })
    .describe(
      "The reverse proxies in front of the platform: comma-separated addresses or CIDRs (127.0.0.1,10.0.0.0/8; loopback, linklocal, uniquelocal) or a hop count. Their X-Forwarded-For, -Proto and -Host then give the client's address, scheme and host. Unset or false: the socket's address, forwarded headers ignored",
    ),
  SESSION_MAX_AGE_HOURS: z.coerce
    .number()
    .positive()
    .default(168)
    .describe("A sign-in session ends this long after sign-in, however active"),
  SESSION_IDLE_HOURS: z.coerce
    .number()
    .positive()
    .default(32)
    .describe("A sign-in session unused this long ends"),
  RATE_LIMITS: z
    .enum(["on", "off"])
    .default("off")
    .describe(
      "FlowFuse's optional limits: RATE_LIMIT_MAX per token, session or address, and 5 per 30 s on PUT /user and POST /user/tokens",
    ),
  RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(1000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  LOGIN_RATE_LIMIT: rateLimit("5/30", "Failed sign-ins per account (username or email); always on"),
  LOGIN_ADDRESS_RATE_LIMIT: rateLimit("30/30", "Failed sign-ins per client address; always on"),
  LOGIN_CHECKS_RATE_LIMIT: rateLimit(
    "300/60",
    "Password checks (sign-ins, right or wrong) per client address; always on",
  ),
  PASSWORD_RATE_LIMIT: rateLimit(
    "5/30",
    "Password changes with a wrong current password, per user; always on",
  ),
  OTC_RATE_LIMIT: rateLimit(
    "10/60",
    "Failed device setups with a one-time code per client address; past it, that address's setups are 429; always on",
  ),
  OTC_GLOBAL_RATE_LIMIT: rateLimit(
    "100/60",
    "Failed device setups with a one-time code from all addresses together; past it, every setup is 429; always on",
  ),
  DEVICE_REGISTRATION_RATE_LIMIT: rateLimit(
    "5/30",
    "Devices' registrations from their own terminal (POST /api/v1/devices/_/register, anonymous) per client address; always on",
  ),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/ })
    .optional()
    .describe("Redis keeping the rate-limit counts, shared by every server process using it"),
  TOKEN_SWEEP_SECONDS: z.coerce.number().int().min(1).default(60),
  WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe("Server processes sharing the port (node:cluster); more than 1 needs DATABASE_URL"),
  BROKER_MODE: z
    .enum(["embedded", "external", "off"])
    .default("embedded")
    .describe(
      "The team MQTT broker: embedded (aedes in this process), external (EMQX calls /api/comms/v2; needs BROKER_URL), or off",
    ),
  MQTT_HOST: z.string().min(1).default("127.0.0.1").describe("The embedded broker's TCP address"),
  MQTT_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe(
      "The embedded broker's TCP port; 0: any free port; unset: the port taken at the first start (1883, or a free one when 1883 was taken), kept in DATA_DIR/mqtt-port",
    ),
  BROKER_CONNECT_RATE_LIMIT: rateLimit(
    "5/30",
    "Failed MQTT CONNECTs per broker client, then refused without a password check",
  ),
  BROKER_CONNECT_ADDRESS_RATE_LIMIT: rateLimit(
    "30/30",
    "Failed MQTT CONNECTs per client address (embedded broker)",
  ),
  INSTANCE_DRIVER: z
    .enum(["local", "off"])
    .default("local")
    .describe(
      "What runs hosted instances: local (Node-RED processes on this machine, under DATA_DIR/instances) or off (instances are kept but not run)",
    ),
  EDITOR_DOMAIN: z
    .string()
    .regex(
      /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
      "A DNS domain, e.g. editors.example.com",
    )
    .default("localhost")
    .describe(
      "Instances' editors are served by the platform at <instance name>.<EDITOR_DOMAIN> on BASE_URL's scheme and port (a wildcard DNS name pointing at the platform; localhost: browsers resolve *.localhost to loopback)",
    ),
  INSTANCE_ISOLATION: z
    .enum(["auto", "required", "off"])
    .default("auto")
    .describe(
      "Each hosted instance in a sandbox (bubblewrap): auto (where one can be made, else a warning), required (an instance without one does not start), or off",
    ),
  INSTANCE_USER_IDS: range(
    "1879048192-1879113727",
    "A range of user ids, e.g. 1879048192-1879113727",
    "When the platform runs as root: the host user ids of sandboxed instances, one each; the first is their shared group",
  ).refine(
    ({ min, max }) => min >= 1 && max < 4294967295 && min < max && min !== 65534,
    "Not a range of user ids (1-4294967294, at least two)",
  ),
  NPM_REGISTRY: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "The npm registry hosted instances install modules from (at start and from the editor's palette), enforced over an instance's own .npmrc; npm's default when unset",
    ),
  PALETTE_ALLOW_LIST: z
    .string()
    .transform((list) =>
      list
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[@A-Za-z0-9._/*~-]+$/, "a module name, * for any text")))
    .optional()
    .describe(
      "The only modules hosted instances may install, comma-separated (`*` matches any text: node-red-contrib-*,@acme/*); any when unset",
    ),
  BROKER_URL: z
    .url({ protocol: /^(mqtts?|wss?)$/ })
    .optional()
    .describe(
      "Where MQTT clients reach the team broker, as GET /settings tells them (external mode: required)",
    ),
  BROKER_PLATFORM_URL: z
    .url({ protocol: /^(mqtts?|wss?)$/ })
    .optional()
    .describe(
      "Where the platform itself reaches an external broker for the devices' channel, when not at BROKER_URL",
    ),
});

export type Config = Omit<z.infer<typeof Env>, "DATABASE"> & {
  BASE_URL: string;
  /** Which database: DATABASE_URL's server, the platform's own, or "default" (decided at start). */
  DATABASE: "postgres" | "embedded-postgres" | "pglite" | "default";
};

export class ConfigError extends Error {}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const result = Env.safeParse(
    Object.fromEntries(Object.entries(source).filter(([, value]) => value !== "")),
  );
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const env = result.data;
  if (env.DATABASE && env.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  DATABASE: chooses the platform's own database, and DATABASE_URL names a server of yours: set one of them",
    );
  }
  if (env.WORKERS > 1 && !env.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  WORKERS: more than one worker needs DATABASE_URL (the platform's own database belongs to one process)",
    );
  }
  if (env.BROKER_MODE === "external" && !env.BROKER_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  BROKER_URL: an external broker (BROKER_MODE=external) needs the URL clients connect to",
    );
  }
  if (env.INSTANCE_DRIVER === "local" && env.WORKERS > 1) {
    throw new ConfigError(
      "Invalid configuration:\n  INSTANCE_DRIVER: the local driver runs instances in one process; with WORKERS > 1 set INSTANCE_DRIVER=off",
    );
  }
  if (env.BROKER_MODE === "embedded" && env.WORKERS > 1) {
    throw new ConfigError(
      "Invalid configuration:\n  BROKER_MODE: the embedded broker runs in one process; with WORKERS > 1 use BROKER_MODE=external (EMQX) or off",
    );
  }
  return {
    ...env,
    DATABASE: env.DATABASE_URL ? "postgres" : (env.DATABASE ?? "default"),
    BASE_URL: (env.BASE_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/$/, ""),
  };
}

/** What hosted instances get from the platform's environment: never its secrets. */
export function instanceBaseEnv(source: Record<string, string | undefined> = process.env) {
  return Object.fromEntries(
    ["PATH", "TZ", "LANG"].flatMap((name) => (source[name] ? [[name, source[name]!]] : [])),
  );
}
