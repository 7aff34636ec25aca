// The local driver's options and their defaults, and the Node-RED it runs (its version, resolved
// as this package resolves it).
import type { Socket } from "node:net";
import { createRequire } from "node:module";
import type { IsolationSetting } from "./sandbox";

export interface LocalDriverOptions {
  /** Where instances' directories live, e.g. `<DATA_DIR>/instances`. */
  root: string;
  /**
   * Each connection an instance's Node-RED opens to the platform (its storage module, its
   * editor's sign-in, its team library: HTTP with its token), accepted on the instance's
   * platform socket (`<root>/<id>/run/platform.sock`, `/run/flowplane/platform.sock` in its
   * sandbox). The platform serves it as one of its own HTTP connections (e.g.
   * `httpServer.emit("connection", socket)`). Without it, no platform socket is made and
   * Node-RED calls `spec.platformUrl` over TCP (the runtime's own tests).
   */
  platformConnection?: (instanceId: string, socket: Socket) => void;
  /** How long Node-RED may take to answer after it is started. */
  startTimeoutMs?: number;
  /** How long a stop waits for Node-RED to exit before it is killed. */
  stopGraceMs?: number;
  /** Log entries kept per instance. */
  logLimit?: number;
  /** Variables every instance gets before its own (PATH, TZ, LANG: never the platform's secrets). */
  baseEnv?: Record<string, string>;
  /**
   * INSTANCE_ISOLATION. `auto` (default): every Node-RED in a sandbox where one can be made, else
   * an ordinary process (`isolation()` says so and why); `required`: an instance without its
   * sandbox is refused its start; `off`: never a sandbox.
   */
  isolation?: IsolationSetting;
  /**
   * When the platform runs as root: the host user ids instances run under, one each; the first is
   * their shared group, not a user. `false`: instances run as the platform's user.
   */
  userIds?: { min: number; max: number } | false;
  /** The bubblewrap executable (default `bwrap`, found on `baseEnv`'s PATH). */
  bwrap?: string;
  /** How long installing an instance's modules may take before it is given up. */
  installTimeoutMs?: number;
  /**
   * `own` (default): each sandbox in a network namespace of its own where one can be made;
   * `host`: sandboxes share the host's network (measurements of what the namespace costs).
   */
  network?: "own" | "host";
  /**
   * Ports of the platform's on the host's loopback that instances in a network namespace of their
   * own still reach, at the same port of their own 127.0.0.1 (the embedded team broker's MQTT
   * port): asked at each start, as a port may be known only once the platform listens.
   */
  platformPorts?: () => number[];
  /**
   * NPM_REGISTRY: the registry every install uses (at start and from the editor's palette),
   * enforced over an instance's own `/data/.npmrc`. None: npm's default registry.
   */
  npmRegistry?: string;
  /**
   * PALETTE_ALLOW_LIST: the only modules instances may install (names; `*` matches any text, as
   * in Node-RED's `externalModules.palette.allowList`). None: any.
   */
  paletteAllowList?: readonly string[];
}

/** Where executables are looked for when `baseEnv` has no PATH. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Host ids for instances' users: a range no distribution or container manager hands out
 * (systemd's table of ranges leaves 1879048192-2147483647 unused), 65,535 instances.
 */
export const DEFAULT_INSTANCE_USER_IDS = { min: 1_879_048_192, max: 1_879_113_727 };

/** The version of the `node-red` package this driver runs. */
export const NODE_RED_VERSION: string = (
  runtimeRequire()("node-red/package.json") as { version: string }
).version;

/** Resolves modules as this package does, wherever the code calling it was bundled. */
export function runtimeRequire(): NodeJS.Require {
  const here = createRequire(import.meta.url);
  return createRequire(here.resolve("@flowplane/runtime/package.json"));
}
