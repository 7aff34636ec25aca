// Each sandbox's network namespace of its own (issue 32): a flow reaches the outside world as
// before, but neither the host's loopback services (a database on 127.0.0.1, the platform's own
// port) nor another instance. The platform and its Node-RED meet on Unix sockets instead
// (driver.ts), which a network namespace does not separate.
//
// Made only when the platform runs as root and pasta (Debian's `passt`) is installed:
//   ip netns add flowplane-<hash>        a named namespace, with only its loopback
//   pasta --config-net --no-map-gw …     its outbound connections become the host's own sockets
//                                        (a user-mode NAT): same address and routes as the host,
//                                        no port forwarded in either direction (-t/-u/-T/-U none),
//                                        and the gateway's address is the real gateway, never the
//                                        host's loopback (--no-map-gw). pasta puts itself in the
//                                        background once the namespace is configured and quits
//                                        when the namespace is deleted.
//   nsenter --net=/run/netns/… -S uid -G gid -- bwrap …   (sandbox.ts)
//   ip netns delete flowplane-<hash>     when the sandbox has exited.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { access, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";

/** What makes and enters network namespaces, once found. */
export interface NetworkTools {
  ip: string;
  pasta: string;
  nsenter: string;
}

/** The directory `ip netns` keeps its named namespaces in. */
const NETNS_DIR = "/run/netns";
/** Every namespace this runtime makes is named so. */
export const NETNS_PREFIX = "flowplane-";

/** Where the system tools are looked for besides the platform's PATH (ip is in sbin). */
const SBIN = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin"];

/**
 * The tools, or why instances share the host's network. Checks that a namespace can really be
 * made and configured (a container may refuse `ip netns add` or pasta's setup).
 */
export async function findNetworkTools(
  path: string,
): Promise<{ tools: NetworkTools } | { reason: string }> {
  if (process.getuid?.() !== 0) {
    return { reason: "a network namespace of its own needs the platform to run as root" };
  }
  const dirs = [...path.split(":").filter(Boolean), ...SBIN];
  const pasta = await findIn("pasta", dirs);
  if (!pasta) return { reason: "pasta was not found (Debian and Ubuntu: apt-get install passt)" };
  const ip = await findIn("ip", dirs);
  if (!ip) return { reason: "ip was not found (Debian and Ubuntu: apt-get install iproute2)" };
  const nsenter = await findIn("nsenter", dirs);
  if (!nsenter) return { reason: "nsenter was not found (Debian and Ubuntu: util-linux)" };
  const tools = { ip, pasta, nsenter };
  const probe = `${NETNS_PREFIX}probe-${process.pid}-${Date.now().toString(36)}`;
  try {
    await openNetwork(tools, probe);
  } catch (error) {
    return { reason: `no network namespace could be made: ${(error as Error).message}` };
  } finally {
    await closeNetwork(tools, probe);
  }
  return { tools };
}

/** The name of an instance's namespace: short, and its own per driver root and instance. */
export function netnsName(root: string, instanceId: string): string {
  const hash = createHash("sha256").update(`${root}\0${instanceId}`).digest("hex");
  return `${NETNS_PREFIX}${hash.slice(0, 16)}`;
}

export function netnsPath(name: string): string {
  return join(NETNS_DIR, name);
}

/** Makes the namespace `name` (replacing a stale one) and connects it to the outside world. */
export async function openNetwork(
  tools: NetworkTools,
  name: string,
  /** Ports on the host's loopback the namespace reaches at its own 127.0.0.1 (the team broker). */
  hostPorts: readonly number[] = [],
): Promise<void> {
  await closeNetwork(tools, name);
  await run(tools.ip, ["netns", "add", name]);
  try {
    // In the background once the namespace is configured: its exit says it is ready.
    await run(tools.pasta, [
      "--config-net",
      "--no-map-gw",
      "-t",
      "none",
      "-u",
      "none",
      "-T",
      hostPorts.length > 0 ? hostPorts.join(",") : "none",
      "-U",
      "none",
      "-q",
      // As root, pasta works on a named namespace only as root.
      "--runas",
      "0",
      "--netns",
      name,
    ]);
  } catch (error) {
    await closeNetwork(tools, name);
    throw error;
  }
}

/** Deletes the namespace `name` when it exists (its pasta then quits by itself). */
export async function closeNetwork(tools: NetworkTools, name: string): Promise<void> {
  const exists = await access(netnsPath(name)).then(
    () => true,
    () => false,
  );
  if (exists) await run(tools.ip, ["netns", "delete", name]).catch(() => {});
}

/** Deletes those of `names` that exist (what a platform that died left behind). */
export async function closeStaleNetworks(tools: NetworkTools, names: Set<string>): Promise<void> {
  const present = await readdir(NETNS_DIR).catch(() => [] as string[]);
  for (const name of present) if (names.has(name)) await closeNetwork(tools, name);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    execFile(
      command,
      args,
      { timeout: 20_000, env: { PATH: SBIN.join(":") } },
      (error, _, stderr) => {
        if (!error) return done();
        const said = stderr.trim().split("\n").slice(-2).join(" ").slice(0, 300);
        fail(
          new Error(`${command} ${args.slice(0, 2).join(" ")} failed${said ? `: ${said}` : ""}`),
        );
      },
    );
  });
}

async function findIn(name: string, dirs: string[]): Promise<string | undefined> {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      await access(candidate, fsConstants.X_OK);
      return resolve(candidate);
    } catch {
      // Not there.
    }
  }
  return undefined;
}
