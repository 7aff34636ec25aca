// The processes the local driver starts for an instance, sandboxed or not: its Node-RED, and npm
// installing its modules (node-red/modules.cjs), with npm's configuration for every npm an
// instance runs.
import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { closeNetwork } from "./network";
import { dirname, join } from "node:path";
import type { InstanceSpec } from "../driver";
import { emptyDirectory, ownerOf } from "./files";
import { findNpm, type InstanceHost, npmReadOnly } from "./host";
import type { Instance } from "./instances";
import type { ModulesRunner } from "./modules";
import { DEFAULT_PATH } from "./options";
import { SANDBOX_RUN_DIR, SANDBOX_USER_DIR, startSandboxed, withListenFd } from "./sandbox";
import { PLATFORM_SOCKET } from "./sockets";

/** The system's CA bundle (Debian, Ubuntu, Alpine, Arch). */
const SYSTEM_CA_FILE = "/etc/ssl/certs/ca-certificates.crt";

/**
 * Starts the instance's Node-RED (its editor listening on `editorFd`), in its sandbox when
 * `sandboxed`, its host pid of the sandbox's init kept in `instance.initPid`.
 */
export async function spawnNodeRed(
  host: InstanceHost,
  instance: Instance,
  spec: InstanceSpec,
  how: { sandboxed: boolean; platform: boolean; network: string | undefined; editorFd: number },
): Promise<ChildProcess> {
  const { sandboxed, platform, network } = how;
  const userDir = sandboxed ? SANDBOX_USER_DIR : join(instance.dir, "userDir");
  const env: NodeJS.ProcessEnv = {
    // Never the platform's own environment (its secrets): only what it chose to pass on.
    ...host.options.baseEnv,
    HOME: userDir,
    ...(sandboxed && { USER: "node-red", LOGNAME: "node-red" }),
    ...spec.env,
    NODE_ENV: "production",
    FLOWPLANE_STOP_ON_STDIN_END: "1",
    FLOWPLANE_PALETTE_INSTALL: spec.paletteInstall === false ? "0" : "1",
    ...npmEnv(host),
    ...(spec.platformUrl && {
      FLOWPLANE_PLATFORM_URL: spec.platformUrl,
      FLOWPLANE_INSTANCE_ID: spec.id,
      FLOWPLANE_TEAM_ID: spec.teamId,
      // The token itself goes down descriptor 3: the environment stays readable in /proc.
      FLOWPLANE_INSTANCE_TOKEN_FD: "3",
      ...(platform && {
        FLOWPLANE_PLATFORM_SOCKET: sandboxed
          ? `${SANDBOX_RUN_DIR}/${PLATFORM_SOCKET}`
          : // Relative to its working directory (userDir): short, however deep DATA_DIR is.
            join("..", "run", PLATFORM_SOCKET),
      }),
    }),
  };
  // No --port: the editor listens on the descriptor it is handed (settings.cjs).
  const nodeRed = [host.redJs, "--settings", host.settingsFile, "--userDir", userDir];
  if (sandboxed) {
    const tmp = join(instance.dir, "tmp");
    await emptyDirectory(tmp, await ownerOf(tmp));
    const sandbox = startSandboxed({
      bwrap: host.bwrap!,
      hostname: spec.name.slice(0, 63) || "node-red",
      readOnly: host.readOnly,
      hidden: await host.hiddenFiles(),
      userDir: { path: join(instance.dir, "userDir"), writable: true },
      tmpDir: join(instance.dir, "tmp"),
      command: [process.execPath, ...nodeRed],
      ...(instance.uid !== undefined && { uid: instance.uid, gid: host.instanceGroup() }),
      env,
      output: "pipe",
      ...host.sandboxNetwork(network),
      ...(platform && { runDir: join(instance.dir, "run") }),
      listenFd: how.editorFd,
    });
    instance.initPid = sandbox.initPid;
    return sandbox.child;
  } else {
    const stdio: StdioOptions = ["pipe", "pipe", "pipe", "pipe"];
    const child = spawn(process.execPath, nodeRed, {
      cwd: userDir,
      env: withListenFd(stdio, env, how.editorFd),
      stdio,
    });
    for (const stream of child.stdio) stream?.on("error", () => {});
    instance.initPid = undefined;
    return child;
  }
}

/**
 * node-red/modules.cjs (package.json, then npm), run in the instance's user directory as its
 * Node-RED would run (sandboxed or not): never by the platform's own process.
 */
export async function runNpm(
  host: InstanceHost,
  instance: Instance,
  spec: InstanceSpec,
  sandboxed: boolean,
  args: readonly string[],
  onOutput: (text: string) => void,
): ReturnType<ModulesRunner> {
  host.npmCli ??= findNpm(host.options.baseEnv?.PATH ?? DEFAULT_PATH);
  // Without npm, modules.cjs says so only when there is something to install.
  const npmCli = (await host.npmCli) ?? "";
  const userDir = sandboxed ? SANDBOX_USER_DIR : join(instance.dir, "userDir");
  const env: NodeJS.ProcessEnv = {
    ...host.options.baseEnv,
    HOME: userDir,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    ...npmEnv(host),
  };
  const script = join(dirname(host.settingsFile), "modules.cjs");
  const command = [process.execPath, script, npmCli, ...args, ...npmArgs(host)];
  let child: ChildProcess;
  let initPid: Promise<number | undefined> | undefined;
  // npm reaches the registry as flows reach the outside world: through a namespace of its own.
  const network = await host.openNetworkOf(instance, await host.isolation());
  if (sandboxed) {
    const sandbox = startSandboxed({
      bwrap: host.bwrap!,
      hostname: spec.name.slice(0, 63) || "node-red",
      readOnly: [...host.readOnly, ...(npmCli ? npmReadOnly(npmCli, host.readOnly) : [])],
      // The instance's own npm configuration too (a scope's registry): the operator's decides.
      hidden: [...(await host.hiddenFiles()), `${SANDBOX_USER_DIR}/.npmrc`],
      userDir: { path: join(instance.dir, "userDir"), writable: true },
      tmpDir: join(instance.dir, "tmp"),
      command,
      ...(instance.uid !== undefined && { uid: instance.uid, gid: host.instanceGroup() }),
      env,
      output: "pipe",
      ...host.sandboxNetwork(network),
    });
    child = sandbox.child;
    initPid = sandbox.initPid;
    (child.stdio[3] as NodeJS.WritableStream | null)?.end();
  } else {
    child = spawn(command[0]!, command.slice(1), {
      cwd: userDir,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    for (const stream of child.stdio) stream?.on("error", () => {});
  }
  (child.stdio[0] as NodeJS.WritableStream | null)?.end();
  let output = "";
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    // Bounded; the first line (modules.cjs's own) is kept whatever npm prints after it.
    if (output.length > 64 * 1024) output = output.slice(0, 1024) + output.slice(-63 * 1024);
    onOutput(text);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const timeoutMs = host.options.installTimeoutMs ?? 300_000;
  const code = await new Promise<number | null>((resolveCode) => {
    const timer = setTimeout(() => {
      output += `\nnpm ERR! gave up after ${timeoutMs / 1000} s`;
      void (async () => {
        const pid = await initPid;
        try {
          if (pid !== undefined) process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
        child.kill("SIGKILL");
      })();
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      output += `\n${error.message}`;
      resolveCode(null);
    });
    child.once("exit", (exitCode) => {
      clearTimeout(timer);
      resolveCode(exitCode);
    });
  });
  if (network && host.network) await closeNetwork(host.network, network);
  return { code, output };
}

/**
 * npm's configuration for every npm an instance runs (at start, and the editor's palette in
 * Node-RED's process): the operator's registry, and user and global files of the platform's
 * (empty), so that neither the host's global npmrc nor `~/.npmrc` apply. Variables outrank an
 * instance's `/data/.npmrc` (npm's project configuration).
 */
export function npmEnv(host: InstanceHost): Record<string, string> {
  const settings = dirname(host.settingsFile);
  return {
    npm_config_userconfig: join(settings, "npmrc-user"),
    npm_config_globalconfig: join(settings, "npmrc-global"),
    ...(host.options.npmRegistry && { npm_config_registry: host.options.npmRegistry }),
    // The system's CA bundle (the sandbox sees /etc/ssl/certs), as Debian's global npmrc had it:
    // a registry behind a CA of the operator's own works once the system trusts that CA.
    ...(existsSync(SYSTEM_CA_FILE) && { npm_config_cafile: SYSTEM_CA_FILE }),
    ...(host.options.paletteAllowList && {
      FLOWPLANE_PALETTE_ALLOW_LIST: JSON.stringify(host.options.paletteAllowList),
    }),
  };
}

/** The same on npm's command line, where the driver runs it. */
export function npmArgs(host: InstanceHost): string[] {
  const settings = dirname(host.settingsFile);
  return [
    `--userconfig=${join(settings, "npmrc-user")}`,
    `--globalconfig=${join(settings, "npmrc-global")}`,
    ...(host.options.npmRegistry ? [`--registry=${host.options.npmRegistry}`] : []),
  ];
}
