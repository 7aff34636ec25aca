// What this machine gives the local driver's instances: how they are isolated (a bubblewrap
// sandbox, host user ids of their own, a network namespace of their own, found once by trying a
// sandbox as an instance would have it), their directories' owners and modes, and what a sandbox
// binds read-only (Node.js, Node-RED, the settings) and hides (the host's npm configuration).
import { realpathSync, constants as fsConstants } from "node:fs";
import { access, chmod, chown, mkdir, readdir, stat } from "node:fs/promises";
import { dirname, join, parse, resolve, sep } from "node:path";
import type { InstanceIsolation } from "../driver";
import { chownTree } from "./files";
import type { Instance } from "./instances";
import {
  closeStaleNetworks,
  findNetworkTools,
  type NetworkTools,
  netnsName,
  netnsPath,
  openNetwork,
} from "./network";
import {
  DEFAULT_INSTANCE_USER_IDS,
  DEFAULT_PATH,
  type LocalDriverOptions,
  runtimeRequire,
} from "./options";
import type { IsolationSetting } from "./sandbox";
import { probeSandbox } from "./sandbox-probe";

/** The isolation of a driver's instances, and what it needs of the host. */
export class InstanceHost {
  readonly redJs: string;
  readonly settingsFile: string;
  readonly root: string;
  readonly setting: IsolationSetting;
  /** bubblewrap's path, once found (none: not installed). */
  bwrap: string | undefined;
  /** What the sandbox binds read-only: Node.js (outside /usr), Node-RED's modules, settings. */
  readonly readOnly: string[];
  private isolationFound: Promise<InstanceIsolation> | undefined;
  /** Serializes the choice of user ids, so that two new instances never get the same one. */
  private userIdQueue: Promise<unknown> = Promise.resolve();
  /** npm's own script (npm-cli.js), once found (none: not installed). */
  npmCli: Promise<string | undefined> | undefined;
  /** What makes network namespaces, once found (none: instances share the host's network). */
  network: NetworkTools | undefined;
  /** The host's npmrc files a sandbox hides, once found. */
  private hidden: Promise<string[]> | undefined;

  constructor(readonly options: LocalDriverOptions) {
    const require = runtimeRequire();
    this.redJs = realpathSync(require.resolve("node-red/red.js"));
    this.settingsFile = realpathSync(require.resolve("@flowplane/runtime/node-red-settings"));
    // Absolute: Node-RED runs in the instance's own directory, where a relative path would not
    // lead back here.
    this.root = resolve(options.root);
    this.setting = options.isolation ?? "auto";
    this.readOnly = sandboxReadOnly(this.redJs, this.settingsFile);
  }

  isolation(): Promise<InstanceIsolation> {
    this.isolationFound ??= this.findIsolation();
    return this.isolationFound;
  }

  /** The host's global npm configuration files, which a sandbox must not show (once found). */
  hiddenFiles(): Promise<string[]> {
    this.hidden ??= (async () => {
      const npmCli = await (this.npmCli ??= findNpm(this.options.baseEnv?.PATH ?? DEFAULT_PATH));
      const node = dirname(dirname(realpathSync(process.execPath)));
      const candidates = [
        "/usr/etc/npmrc",
        "/usr/local/etc/npmrc",
        join(node, "etc", "npmrc"),
        ...(npmCli ? [join(dirname(dirname(npmCli)), "npmrc")] : []),
      ];
      const found: string[] = [];
      for (const path of new Set(candidates)) {
        if (
          await stat(path).then(
            (info) => info.isFile(),
            () => false,
          )
        )
          found.push(path);
      }
      return found;
    })();
    return this.hidden;
  }

  /** How instances are isolated here: tries a sandbox as an instance would have it. */
  private async findIsolation(): Promise<InstanceIsolation> {
    const required = this.setting === "required";
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    // Instances need no way through it (their directories are bound by the platform): an earlier
    // version let their group through (0710).
    await chmod(this.root, 0o700);
    if (this.setting === "off") {
      return {
        mode: "none",
        user: "platform",
        required,
        network: "host",
        reason: "INSTANCE_ISOLATION=off",
      };
    }
    const name = this.options.bwrap ?? "bwrap";
    this.bwrap = await findExecutable(name, this.options.baseEnv?.PATH ?? DEFAULT_PATH);
    if (!this.bwrap) {
      const reason = `${name} was not found (Debian and Ubuntu: apt-get install bubblewrap)`;
      return { mode: "none", user: "platform", required, network: "host", reason };
    }
    const probe = {
      bwrap: this.bwrap,
      readOnly: this.readOnly,
      // Its own /data: any directory all may read (DATA_DIR is the platform's alone).
      dir: dirname(this.settingsFile),
      // Node.js runs and finds Node-RED and the settings where an instance will.
      command: [
        process.execPath,
        "-e",
        `const fs = require("node:fs"); fs.accessSync(${JSON.stringify(this.redJs)}, fs.constants.R_OK); fs.accessSync(${JSON.stringify(this.settingsFile)}, fs.constants.R_OK);`,
      ],
      env: { PATH: "/usr/bin:/bin" },
    };
    const group = this.instanceGroup();
    if (group !== undefined) {
      const refused = await probeSandbox({ ...probe, uid: group + 1, gid: group });
      if (!refused) return this.withNetwork({ mode: "sandbox", user: "per-instance", required });
      // Never the platform's own user instead: that is root.
      return {
        mode: "none",
        user: "platform",
        required,
        network: "host",
        reason: `instances cannot have user ids of their own: ${refused}`,
      };
    }
    const refused = await probeSandbox(probe);
    if (!refused) return this.withNetwork({ mode: "sandbox", user: "platform", required });
    return { mode: "none", user: "platform", required, network: "host", reason: refused };
  }

  /**
   * A sandbox's network: a namespace of its own where the tools are here and one can be made,
   * else the host's, with why. Namespaces a platform that died left behind are deleted.
   */
  private async withNetwork(
    sandbox: Omit<InstanceIsolation, "network">,
  ): Promise<InstanceIsolation> {
    if (this.options.network === "host") {
      const reason = [
        sandbox.reason,
        "instances share the host's network: the driver's network option",
      ];
      return { ...sandbox, network: "host", reason: reason.filter(Boolean).join("; ") };
    }
    const found = await findNetworkTools(this.options.baseEnv?.PATH ?? DEFAULT_PATH);
    if ("reason" in found) {
      const reason = [sandbox.reason, `instances share the host's network: ${found.reason}`];
      return { ...sandbox, network: "host", reason: reason.filter(Boolean).join("; ") };
    }
    this.network = found.tools;
    const ids = await readdir(this.root).catch(() => [] as string[]);
    await closeStaleNetworks(found.tools, new Set(ids.map((id) => netnsName(this.root, id))));
    return { ...sandbox, network: "own" };
  }

  /** The instances' shared group, when each runs under a user id of its own (root only). */
  instanceGroup(): number | undefined {
    const ids = this.options.userIds ?? DEFAULT_INSTANCE_USER_IDS;
    if (!ids || this.setting === "off" || process.getuid?.() !== 0) return undefined;
    if (ids.min < 1 || ids.max >= 4_294_967_295 || ids.max <= ids.min) {
      throw new Error(`not a range of user ids: ${ids.min}-${ids.max}`);
    }
    return ids.min;
  }

  /**
   * The instance's directories with the modes and owners its isolation needs: created when
   * missing, given to the instance's own user id (chosen once, kept by the userDir's owner).
   */
  async prepareFiles(instance: Instance, isolation: InstanceIsolation): Promise<void> {
    const userDir = join(instance.dir, "userDir");
    const tmp = join(instance.dir, "tmp");
    await mkdir(instance.dir, { recursive: true, mode: 0o700 });
    await mkdir(userDir, { recursive: true, mode: 0o700 });
    if (isolation.mode === "sandbox") await mkdir(tmp, { recursive: true, mode: 0o700 });
    // A running Node-RED keeps what it runs with: its files are never re-owned under it.
    if (instance.child) return;
    const group = isolation.user === "per-instance" ? this.instanceGroup() : undefined;
    if (group === undefined) {
      instance.uid = undefined;
      return;
    }
    // The platform's alone: the sandbox is given userDir and tmp by the platform (sandbox.ts).
    await chown(instance.dir, process.getuid!(), process.getgid!());
    await chmod(instance.dir, 0o700);
    const owner = (await stat(userDir)).uid;
    const uid = await this.userIdFor(instance, owner, group);
    if (uid !== owner) await chownTree(userDir, uid, group);
    if ((await stat(tmp)).uid !== uid) await chownTree(tmp, uid, group);
    instance.uid = uid;
  }

  /** The instance's user id: the one its userDir has, else the lowest no other instance has. */
  private userIdFor(instance: Instance, owner: number, group: number): Promise<number> {
    const { max } = (this.options.userIds || DEFAULT_INSTANCE_USER_IDS) as { max: number };
    const chosen = this.userIdQueue.then(async () => {
      const taken = new Set<number>();
      for (const entry of await readdir(this.root)) {
        if (entry === instance.id) continue;
        const other = await stat(join(this.root, entry, "userDir")).catch(() => undefined);
        if (other) taken.add(other.uid);
      }
      if (owner > group && owner <= max && !taken.has(owner)) return owner;
      for (let uid = group + 1; uid <= max; uid++) if (!taken.has(uid)) return uid;
      throw new Error(`no free user id in ${group + 1}-${max} for another instance`);
    });
    this.userIdQueue = chosen.catch(() => {});
    return chosen;
  }

  /**
   * The network namespace the instance's next sandbox runs in, made now; undefined where
   * instances share the host's network. One that cannot be made fails the start (or the install).
   */
  async openNetworkOf(
    instance: Instance,
    isolation: InstanceIsolation,
  ): Promise<string | undefined> {
    if (isolation.mode !== "sandbox" || isolation.network !== "own" || !this.network) {
      return undefined;
    }
    const name = netnsName(this.root, instance.id);
    try {
      await openNetwork(this.network, name, this.options.platformPorts?.() ?? []);
    } catch (error) {
      throw new Error(`no network namespace could be made: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return name;
  }

  sandboxNetwork(network: string | undefined) {
    return network && this.network
      ? { network: { nsenter: this.network.nsenter, netnsPath: netnsPath(network) } }
      : {};
  }
}

/**
 * Why no instance may start here, if so: INSTANCE_ISOLATION=required without a sandbox, or a
 * platform run as root whose instances cannot have user ids of their own (they would be root).
 */
export function startRefusal(
  isolation: InstanceIsolation,
): { why: string; detail: string } | undefined {
  if (isolation.mode === "none" && isolation.required) {
    return {
      why: `INSTANCE_ISOLATION=required and no sandbox can be made (${isolation.reason})`,
      detail: "refused: no sandbox (INSTANCE_ISOLATION=required)",
    };
  }
  if (isolation.user === "platform" && process.getuid?.() === 0) {
    return {
      why: `the platform runs as root and its instances cannot run under user ids of their own (${isolation.reason ?? "INSTANCE_USER_IDS is off"}): an instance never runs as root. Run the platform as an ordinary user, or make the sandbox work (bubblewrap, INSTANCE_ISOLATION=auto)`,
      detail: "refused: it would run as root",
    };
  }
  return undefined;
}

/** `name` when it is a path, else the first executable of that name on `path`. */
async function findExecutable(name: string, path: string): Promise<string | undefined> {
  const candidates = name.includes("/")
    ? [name]
    : path.split(":").flatMap((dir) => (dir ? [join(dir, name)] : []));
  for (const candidate of candidates) {
    try {
      await access(candidate, fsConstants.X_OK);
      return resolve(candidate);
    } catch {
      // Not there.
    }
  }
  return undefined;
}

/** npm's script, found on `path` (the `npm` there is a link to it, or a wrapper beside it). */
export async function findNpm(path: string): Promise<string | undefined> {
  const npm = await findExecutable("npm", path);
  if (!npm) return undefined;
  const real = realpathSync(npm);
  if (real.endsWith(".js")) return real;
  // A wrapper script (a Node.js tarball's bin/npm): its npm-cli.js is in lib/node_modules.
  const beside = join(dirname(dirname(real)), "lib", "node_modules", "npm", "bin", "npm-cli.js");
  return (await access(beside).then(
    () => true,
    () => false,
  ))
    ? beside
    : undefined;
}

/** npm's own directory, when the sandbox does not already see it (under /usr or beside Node.js). */
export function npmReadOnly(npmCli: string, readOnly: readonly string[]): string[] {
  const npmDir = dirname(dirname(npmCli));
  return [...readOnly, "/usr"].some((outer) => npmDir === outer || npmDir.startsWith(outer + sep))
    ? []
    : [npmDir];
}

/**
 * The host directories a sandbox needs besides /usr, bound read-only where they are: Node.js's
 * installation when it is elsewhere (nvm, a tarball), the outermost node_modules above Node-RED
 * (its dependencies are found through it, whatever the package manager's layout), and the
 * directory of settings.cjs and platform.cjs.
 */
function sandboxReadOnly(redJs: string, settingsFile: string): string[] {
  const node = realpathSync(process.execPath);
  const paths = [dirname(dirname(node)), outermostModules(redJs), dirname(settingsFile)];
  const kept: string[] = [];
  for (const path of paths.sort((a, b) => a.length - b.length)) {
    if ([...kept, "/usr"].some((outer) => path === outer || path.startsWith(outer + sep))) continue;
    kept.push(path);
  }
  return kept;
}

function outermostModules(file: string): string {
  const { root } = parse(file);
  const parts = file.slice(root.length).split(sep);
  const first = parts.indexOf("node_modules");
  return first === -1 ? dirname(dirname(file)) : root + parts.slice(0, first + 1).join(sep);
}
