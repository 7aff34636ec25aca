// The boundary around each Node-RED the local driver runs: a bubblewrap (`bwrap`) sandbox.
//
// Inside it an instance has
//   - namespaces of its own for processes (it sees its own only), users (it is uid/gid 1000,
//     mapped to one host id; it cannot create further user namespaces), IPC, host name and
//     cgroups — and, where the driver can make one (network.ts), a network namespace of its own,
//     entered before bubblewrap starts (the platform and the editor meet on Unix sockets);
//   - a filesystem made of: /usr and the system's library links, read-only; a short list of /etc
//     (name resolution, TLS roots, time zone, the linker's cache) read-only, with passwd, group
//     and hosts of its own; Node.js, Node-RED's modules and the settings directory read-only at
//     their own paths; its user directory read-write at /data; a private /tmp (a directory of its
//     own, emptied at every start); a new /proc, a minimal /dev with a 64 MiB /dev/shm. The rest
//     is read-only, and nothing else of the machine is there — no DATA_DIR, no other instance,
//     no home directories, no sockets under /run;
//   - no capabilities, no set-uid programs (every bind is nosuid), a session of its own, and no
//     life beyond the platform's (it is killed when the platform dies).
// How bubblewrap reaches the directories it binds when it runs as an instance's own user is
// staging.ts; whether a sandbox can be made here at all, sandbox-probe.ts.
// docs/drivers.md explains the choices.
import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { stagedSources } from "./staging";

/** What INSTANCE_ISOLATION asks for. */
export type IsolationSetting = "auto" | "required" | "off";

/** Where an instance's user directory appears inside its sandbox. */
export const SANDBOX_USER_DIR = "/data";
/** The user and group an instance is inside its sandbox, whatever its host ids. */
const INSIDE_ID = "1000";
const INSIDE_USER = "node-red";

/** The descriptors of a sandboxed process, after stdin, stdout, stderr and the token (3). */
const INFO_FD = 4;
const PASSWD_FD = 5;
const GROUP_FD = 6;
const HOSTS_FD = 7;
/** The size of /dev/shm (and of /tmp where it is not a directory on disk), as Docker's. */
const SHM_BYTES = 64 * 1024 * 1024;

/** System paths outside /usr: bound read-only, or made again as the links they are (merged /usr). */
const SYSTEM_PATHS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * What of /etc a sandbox sees: what programs need to resolve names, check TLS certificates, know
 * the time zone and find their libraries — never the rest (private keys, the platform's own
 * configuration, whatever an operator keeps there).
 */
const ETC_PATHS = [
  "/etc/resolv.conf",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/services",
  "/etc/protocols",
  "/etc/networks",
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/etc/pki/ca-trust",
  "/etc/pki/tls/certs",
  "/etc/pki/tls/openssl.cnf",
  "/etc/crypto-policies",
  "/etc/localtime",
  "/etc/timezone",
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/mime.types",
  "/etc/os-release",
  "/etc/debian_version",
];

/** The arguments that make up the boundary, computed once (they depend on the machine only). */
let systemArgs: string[] | undefined;

function machineArgs(): string[] {
  if (systemArgs) return systemArgs;
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const path of SYSTEM_PATHS) {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
      else if (info.isDirectory()) args.push("--ro-bind", path, path);
    } catch {
      // Not on this system.
    }
  }
  for (const path of ETC_PATHS) args.push("--ro-bind-try", path, path);
  systemArgs = args;
  return args;
}

export interface SandboxOptions {
  /** The bubblewrap executable. */
  bwrap: string;
  /** The sandbox's host name (the instance's name). */
  hostname: string;
  /** Host directories bound read-only at their own path (Node.js, Node-RED, the settings). */
  readOnly: readonly string[];
  /**
   * Files at these paths (inside what is bound, /data included) are not there: /dev/null on a
   * nodev mount. One missing under /data is made (empty) by bubblewrap.
   */
  hidden?: readonly string[];
  /** The host directory seen as /data, and whether the instance may write to it. */
  userDir: { path: string; writable: boolean };
  /** The host directory seen as /tmp; none: a /tmp of the sandbox's own in memory. */
  tmpDir?: string;
  /** What runs inside: the executable (a path inside the sandbox) and its arguments. */
  command: readonly string[];
  /** The host ids bubblewrap runs as (the platform's own when absent). */
  uid?: number;
  gid?: number;
  /** The environment of the process inside (bubblewrap passes its own on). */
  env: NodeJS.ProcessEnv;
  /** Standard output and error: "pipe" to read them, "ignore" to drop them. */
  output: "pipe" | "ignore";
  /** A host directory seen read-only at /run/flowplane (the instance's platform socket). */
  runDir?: string;
  /** A listening socket (a host descriptor) handed to the process inside: its number there is
   *  `FLOWPLANE_EDITOR_FD` in its environment. */
  listenFd?: number;
  /** The network namespace to run in (network.ts): bubblewrap is started by `nsenter`, as root,
   *  which enters it and then becomes `uid`/`gid`. None: the platform's own network. */
  network?: { nsenter: string; netnsPath: string };
}

export interface Sandboxed {
  child: ChildProcess;
  /** The host pid of the sandbox's init (killing it ends every process inside), once known. */
  initPid: Promise<number | undefined>;
}

/** Starts `command` in a sandbox; fd 3 of the process inside is the returned child's stdio[3]. */
export function startSandboxed(options: SandboxOptions): Sandboxed {
  const staged = options.uid !== undefined ? stagedSources() : undefined;
  const source = (path: string) => staged?.add(path) ?? path;
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--uid",
    INSIDE_ID,
    "--gid",
    INSIDE_ID,
    "--hostname",
    options.hostname,
    ...machineArgs(),
    "--ro-bind-data",
    String(PASSWD_FD),
    "/etc/passwd",
    "--ro-bind-data",
    String(GROUP_FD),
    "/etc/group",
    "--ro-bind-data",
    String(HOSTS_FD),
    "/etc/hosts",
    // /tmp before the read-only code: a platform checked out under /tmp (a CI clone) keeps its
    // Node-RED visible through the instance's own /tmp (bubblewrap mounts in argument order).
    ...(options.tmpDir
      ? ["--bind", source(options.tmpDir), "/tmp"]
      : ["--perms", "1777", "--size", String(SHM_BYTES), "--tmpfs", "/tmp"]),
    ...options.readOnly.flatMap((path) => ["--ro-bind", source(path), path]),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    // POSIX shared memory, bounded as Docker bounds it: the rest of memory is not the instance's.
    "--perms",
    "1777",
    "--size",
    String(SHM_BYTES),
    "--tmpfs",
    "/dev/shm",
    options.userDir.writable ? "--bind" : "--ro-bind",
    source(options.userDir.path),
    SANDBOX_USER_DIR,
    ...(options.runDir ? ["--ro-bind", source(options.runDir), SANDBOX_RUN_DIR] : []),
    // A device on a nodev mount: opening it is refused, so what the file held is not there.
    ...(options.hidden ?? []).flatMap((path) => ["--ro-bind", "/dev/null", path]),
    // The sandbox's own root and /dev are memory: read-only once made, so that the instance
    // writes only to its directories (on disk) and the bounded /dev/shm.
    "--remount-ro",
    "/dev",
    "--remount-ro",
    "/",
    "--chdir",
    SANDBOX_USER_DIR,
    "--info-fd",
    String(INFO_FD),
    "--",
    ...options.command,
  ];
  const stdio: StdioOptions = [
    "pipe",
    options.output,
    options.output,
    "pipe",
    "pipe",
    "pipe",
    "pipe",
    "pipe",
  ];
  const env = withListenFd(stdio, options.env, options.listenFd);
  // What runs inside gets its environment from bubblewrap (--clearenv, then --setenv each), read
  // from a descriptor (--args): the programs that start the sandbox run as root before it
  // (nsenter, unshare, the staging's shell, setpriv) and must see none of the instance's
  // variables — an LD_PRELOAD of the tenant's would load its library into them — and a command
  // line is readable by every user of the machine.
  stdio.push("pipe");
  const argsFd = stdio.length - 1;
  const inside = ["--args", String(argsFd), ...args];
  const [command, commandArgs, ids] = inNetwork(
    options,
    staged
      ? staged.command(options.bwrap, inside, options.uid!, options.gid ?? options.uid!)
      : [options.bwrap, ...inside],
    staged !== undefined,
  );
  const child = spawn(command, commandArgs, {
    // bubblewrap needs no directory of the platform's (an instance's user may not enter it).
    cwd: "/",
    env: { PATH: STARTER_PATH },
    stdio,
    ...ids,
  });
  endStream(child, argsFd, environmentArgs(env));
  // Every stream may break when bubblewrap fails or the sandbox is killed: that is reported by
  // the child's exit, not as an error of the platform's.
  for (const stream of child.stdio) stream?.on("error", () => {});
  child.on("error", () => {});
  const files = sandboxFiles(options.hostname);
  endStream(child, PASSWD_FD, files.passwd);
  endStream(child, GROUP_FD, files.group);
  endStream(child, HOSTS_FD, files.hosts);

  const info = child.stdio[INFO_FD] as NodeJS.ReadableStream | null;
  const initPid = new Promise<number | undefined>((resolve) => {
    if (!info) return resolve(undefined);
    let text = "";
    info.on("data", (chunk: Buffer) => {
      text += chunk;
      // bubblewrap writes one JSON object, then keeps the descriptor open until it exits.
      try {
        const pid = (JSON.parse(text) as { "child-pid"?: unknown })["child-pid"];
        resolve(typeof pid === "number" ? pid : undefined);
      } catch {
        // Not all of it yet.
      }
    });
    info.on("end", () => resolve(undefined));
    info.on("error", () => resolve(undefined));
    child.once("exit", () => resolve(undefined));
  });
  return { child, initPid };
}

/** Where the instance's run directory (its platform socket) appears inside the sandbox. */
export const SANDBOX_RUN_DIR = "/run/flowplane";

/** Appends the listening socket to the descriptors handed down; says its number in `env`. */
export function withListenFd(
  stdio: StdioOptions,
  env: NodeJS.ProcessEnv,
  listenFd: number | undefined,
): NodeJS.ProcessEnv {
  if (listenFd === undefined || !Array.isArray(stdio)) return env;
  stdio.push(listenFd);
  return { ...env, FLOWPLANE_EDITOR_FD: String(stdio.length - 1) };
}

/**
 * The command line that starts the sandbox, in the instance's network namespace when it has one:
 * `nsenter`, spawned as root, enters the namespace first (a process of the instance's user could
 * not), then runs `command` — the staging, which itself becomes the instance's user
 * (`staged`), or bubblewrap, dropped to the instance's ids by nsenter itself.
 */
function inNetwork(
  options: SandboxOptions,
  command: string[],
  staged: boolean,
): [string, string[], { uid?: number; gid?: number }] {
  const ids = staged
    ? {}
    : {
        ...(options.uid !== undefined && { uid: options.uid }),
        ...(options.gid !== undefined && { gid: options.gid }),
      };
  if (!options.network) return [command[0]!, command.slice(1), ids];
  const drop = [
    ...(ids.uid !== undefined ? ["-S", String(ids.uid)] : []),
    ...(ids.gid !== undefined ? ["-G", String(ids.gid)] : []),
  ];
  return [
    options.network.nsenter,
    [`--net=${options.network.netnsPath}`, ...drop, "--", ...command],
    {},
  ];
}

/** Where the programs that start a sandbox are looked for (each is named by its full path). */
const STARTER_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * bubblewrap's arguments that give what runs inside exactly `env`, NUL-separated for `--args`
 * (a name or value with a NUL in it, which no environment can hold, is left out).
 */
export function environmentArgs(env: NodeJS.ProcessEnv): string {
  const args = ["--clearenv"];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.includes("\0") || value.includes("\0") || name === "") {
      continue;
    }
    args.push("--setenv", name, value);
  }
  return `${args.join("\0")}\0`;
}

function endStream(child: ChildProcess, fd: number, text: string) {
  const stream = child.stdio[fd] as NodeJS.WritableStream | null;
  stream?.end(text);
}

/** The sandbox's own passwd, group and hosts: its user by name, and its host name. */
function sandboxFiles(hostname: string) {
  let hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  try {
    // The machine's own entries (names an operator gave to hosts flows should reach) come along.
    hosts = readFileSync("/etc/hosts", "utf8");
    if (!hosts.endsWith("\n")) hosts += "\n";
  } catch {
    // No /etc/hosts: the defaults above.
  }
  return {
    passwd: [
      "root:x:0:0:root:/root:/usr/sbin/nologin",
      `${INSIDE_USER}:x:${INSIDE_ID}:${INSIDE_ID}:Node-RED:${SANDBOX_USER_DIR}:/bin/sh`,
      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
      "",
    ].join("\n"),
    group: ["root:x:0:", `${INSIDE_USER}:x:${INSIDE_ID}:`, "nogroup:x:65534:", ""].join("\n"),
    hosts: `${hosts}127.0.1.1\t${hostname}\n`,
  };
}
