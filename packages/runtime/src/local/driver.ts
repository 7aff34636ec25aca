// The local driver: each instance is a Node-RED process on this machine (the `node-red` package
// this one depends on, so nothing is installed when an instance is created), in a sandbox of its
// own (sandbox.ts) with a network namespace of its own (network.ts) where they can be made, with
// its own directory under the driver's root:
//
//   <root>/<instanceId>/userDir/      Node-RED's user directory: all the instance can write
//                                     (/data in its sandbox); its modules go in node_modules/
//   <root>/<instanceId>/tmp/          its /tmp in the sandbox, emptied at every start
//   <root>/<instanceId>/editor.sock   where the platform reaches its editor (HTTP): a socket the
//                                     driver listens on and hands to Node-RED as a descriptor
//   <root>/<instanceId>/run/platform.sock  where its Node-RED reaches the platform (the storage
//                                     API), accepted by the driver; /run/flowplane in its sandbox
//   <root>/<instanceId>/output.jsonl  what the process printed, one LogEntry per line
//
// No instance listens on a TCP port: the sockets are in directories the instance cannot write,
// so that nothing the platform connects to (as root) is a path the tenant could change.
//
// Everything is private to the platform's user (0700 directories, 0600 files); when the platform
// runs as root, each instance runs under a host user id of its own, which owns its userDir and
// tmp (bound into its sandbox by the platform: sandbox.ts), and never as root: without ids of
// their own, instances are refused their start.
//
// The process's output is parsed into log entries (Node-RED's `[level]`), kept in memory for the
// logs call (the last `logLimit`) and appended to output.jsonl, which is read back when the
// platform restarts. A process that exits without being asked to is `crashed`.
//
// This file holds the driver's calls and an instance's start and stop; the rest is beside it:
// options.ts (its options, the Node-RED it runs), instances.ts (each instance's record, state and
// log), host.ts (how instances are isolated here, their directories' owners), processes.ts (the
// Node-RED and npm processes it starts), sockets.ts (the editor's and the platform's sockets).
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Server } from "node:net";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  type Driver,
  type InstanceIsolation,
  type InstanceSpec,
  ModuleInstallError,
} from "../driver";
import { InstanceHost, startRefusal } from "./host";
import { type Instance, InstanceRecords, removeInstanceFiles } from "./instances";
import { checkAllowed, installModules } from "./modules";
import { closeNetwork } from "./network";
import { type LocalDriverOptions, NODE_RED_VERSION } from "./options";
import { runNpm, spawnNodeRed } from "./processes";
import {
  type EditorSocket,
  forgetSocketDirs,
  listenEditor,
  openPlatformSocket,
  waitForAnswer,
} from "./sockets";

export class LocalDriver extends InstanceRecords implements Driver {
  readonly name = "local";
  private readonly startTimeoutMs: number;
  private readonly stopGraceMs: number;
  /** Set by `close`: nothing starts after it (a start queued behind the stops would outlive it). */
  private closed = false;
  private readonly host: InstanceHost;

  constructor(private readonly options: LocalDriverOptions) {
    super(resolve(options.root), options.logLimit ?? 1000);
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 10_000;
    this.host = new InstanceHost(options);
  }

  isolation(): Promise<InstanceIsolation> {
    return this.host.isolation();
  }

  create(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, async (instance) => {
      this.checkOpen();
      this.checkVersion(spec);
      await this.host.prepareFiles(instance, await this.host.isolation());
      if (instance.state === "absent") this.setState(instance, "stopped");
    });
  }

  start(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, (instance) => this.startNow(instance, spec));
  }

  stop(id: string): Promise<void> {
    return this.serialized(id, (instance) => this.stopNow(instance));
  }

  restart(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, async (instance) => {
      await this.stopNow(instance);
      await this.startNow(instance, spec);
    });
  }

  suspend(id: string): Promise<void> {
    return this.serialized(id, async (instance) => {
      // A stopped instance holds nothing but its files (no port, no namespace, no socket).
      await this.stopNow(instance);
    });
  }

  remove(id: string): Promise<void> {
    // A start under way is ended now rather than waited for: the instance's platform side is
    // going, so its Node-RED would wait out its timeout for flows it cannot have.
    const starting = this.instances.get(id);
    if (starting?.state === "starting") void this.stopNow(starting).catch(() => {});
    return this.serialized(id, async (instance) => {
      await this.stopNow(instance);
      instance.output?.end();
      instance.output = undefined;
      forgetSocketDirs(instance.dir);
      await removeInstanceFiles(instance.dir);
      this.instances.delete(id);
      this.emit(instance.id, { state: "absent", endpoint: null });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    // A start under way waits for an editor that reads its flows from a platform that is closing:
    // it is ended now, outside the queue, so that the stops below do not wait out its timeout.
    for (const instance of this.instances.values()) {
      if (instance.state === "starting") void this.stopNow(instance).catch(() => {});
    }
    await Promise.all([...this.instances.keys()].map((id) => this.stop(id).catch(() => {})));
    for (const instance of this.instances.values()) instance.output?.end();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error("the platform is shutting down: no instance starts now");
  }

  private checkVersion(spec: InstanceSpec): void {
    if (spec.nodeRedVersion !== NODE_RED_VERSION) {
      throw new Error(
        `the local driver runs Node-RED ${NODE_RED_VERSION}, not ${spec.nodeRedVersion}`,
      );
    }
  }

  private async startNow(instance: Instance, spec: InstanceSpec): Promise<void> {
    this.checkOpen();
    this.checkVersion(spec);
    if (instance.state === "running" || instance.state === "starting") return;
    if (instance.state === "absent") throw new Error(`instance ${instance.id} was not created`);
    await this.loadLog(instance);
    const isolation = await this.host.isolation();
    const refusal = startRefusal(isolation);
    if (refusal) {
      const why = `Not started: ${refusal.why}`;
      this.system(instance, why);
      instance.detail = refusal.detail;
      instance.state = "crashed";
      this.emit(instance.id, this.statusOf(instance));
      throw new Error(why);
    }
    await this.host.prepareFiles(instance, isolation);
    instance.detail = undefined;
    instance.stopping = false;
    const sandboxed = isolation.mode === "sandbox";
    this.system(
      instance,
      `Starting Node-RED ${NODE_RED_VERSION}${sandboxed ? " in its sandbox" : ""}${isolation.network === "own" ? " with a network of its own" : ""}`,
    );
    if (!sandboxed) {
      this.system(
        instance,
        `Not isolated: its flows can read and change whatever the platform's user can (${isolation.reason})`,
      );
    }

    const platform = await openPlatformSocket(
      this.options.platformConnection,
      instance,
      spec,
      instance.uid !== undefined ? this.host.instanceGroup() : undefined,
    );
    let network: string | undefined;
    let editor: EditorSocket;
    try {
      await this.installModulesOf(instance, spec, sandboxed);
      network = await this.host.openNetworkOf(instance, isolation);
      editor = await listenEditor(instance.dir);
    } catch (error) {
      await this.release(instance, platform?.server, network);
      if (!(error instanceof ModuleInstallError)) {
        // Not the install (which says so itself): the namespace or the editor's socket.
        const why = error instanceof Error ? error.message : String(error);
        this.system(instance, `Not started: ${why}`);
        instance.detail = why;
        instance.state = "crashed";
        this.emit(instance.id, this.statusOf(instance));
      }
      throw error;
    }

    let child: ChildProcess;
    try {
      child = await spawnNodeRed(this.host, instance, spec, {
        sandboxed,
        platform: platform !== undefined,
        network,
        editorFd: editor.fd,
      });
    } finally {
      // Only Node-RED accepts on the editor's socket from now on (see listenEditor).
      editor.handOver();
    }
    (child.stdio[3] as NodeJS.WritableStream).end(spec.platformUrl ? `${spec.token}\n` : "");
    instance.child = child;
    this.setState(instance, "starting");
    const flowsSettled = new Promise<"settled">((resolve) => {
      instance.flowsSettled = () => resolve("settled");
    });
    this.capture(instance, child.stdout!, "info");
    this.capture(instance, child.stderr!, "error");
    const exited = once(child, "exit").then(async ([code, signal]) => {
      await this.release(instance, platform?.server, network);
      this.exited(
        instance,
        child,
        code as number | null,
        signal as NodeJS.Signals | null,
        sandboxed,
      );
    });
    instance.ended = exited;
    child.once("error", (error) => this.system(instance, `Could not start: ${error.message}`));

    const deadline = Date.now() + this.startTimeoutMs;
    let ready = await Promise.race([
      waitForAnswer(editor.path, this.startTimeoutMs).then((answered) =>
        answered ? "ready" : "timeout",
      ),
      exited.then(() => "exited" as const),
    ]);
    if (ready === "ready") {
      // Running once the flows are in place too, so that a deploy right after is kept.
      let timer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        flowsSettled,
        exited.then(() => "exited" as const),
        new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
        }),
      ]);
      clearTimeout(timer);
      if (settled === "exited") ready = "exited";
      if (settled === "late") {
        this.system(instance, "Node-RED answers but has not said that its flows started");
      }
    }
    instance.flowsSettled = undefined;
    if (ready === "ready" && instance.child === child) {
      this.setState(instance, "running");
      return;
    }
    if (ready === "timeout") {
      await this.stopNow(instance);
      throw new Error(`Node-RED did not answer within ${this.startTimeoutMs / 1000} s`);
    }
    throw new Error(`Node-RED exited while starting (${instance.detail ?? "unknown"})`);
  }

  /**
   * Installs the modules the instance's flows use, in its sandbox as its own user, before its
   * Node-RED starts. A failure is the instance's log and its state (`crashed`, with why), and
   * the start's rejection: Node-RED is not started, and nothing retries it by itself.
   */
  private async installModulesOf(
    instance: Instance,
    spec: InstanceSpec,
    sandboxed: boolean,
  ): Promise<void> {
    try {
      checkAllowed(spec.modules ?? {}, this.options.paletteAllowList);
      await installModules({
        modules: spec.modules ?? {},
        run: (args, onOutput) => runNpm(this.host, instance, spec, sandboxed, args, onOutput),
        log: (message) => this.system(instance, message),
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.system(instance, `Not started: ${why}`);
      instance.detail = why;
      instance.state = "crashed";
      this.emit(instance.id, this.statusOf(instance));
      throw error instanceof ModuleInstallError ? error : new ModuleInstallError(why, "");
    }
  }

  private async stopNow(instance: Instance): Promise<void> {
    const child = instance.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      // Nothing runs: asked to stop, a crashed instance is now simply stopped.
      if (instance.state !== "absent") {
        instance.detail = undefined;
        this.setState(instance, "stopped");
      }
      return;
    }
    instance.stopping = true;
    const exited = once(child, "exit");
    // Node-RED stops its flows and exits when its stdin ends (settings.cjs): a signal would reach
    // the sandbox's init, not Node-RED.
    child.stdin?.end();
    const timer = setTimeout(() => void this.kill(instance, child), this.stopGraceMs);
    await exited;
    clearTimeout(timer);
    await instance.ended;
  }

  /**
   * Ends the process at once. A sandbox's init is killed rather than bubblewrap: every process
   * inside dies with it, and bubblewrap exits only once they are gone (the port is free).
   */
  private async kill(instance: Instance, child: ChildProcess): Promise<void> {
    const initPid = await instance.initPid;
    if (initPid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(initPid, "SIGKILL");
        return;
      } catch {
        // Already gone: bubblewrap itself follows.
      }
    }
    child.kill("SIGKILL");
  }

  /** Releases what a Node-RED held once it has exited: its platform socket, its namespace and
   *  the editor's socket file. */
  private async release(
    instance: Instance,
    platform: Server | undefined,
    network: string | undefined,
  ): Promise<void> {
    // libuv removes the socket's file as it closes the listener.
    platform?.close();
    if (network && this.host.network) await closeNetwork(this.host.network, network);
    await rm(join(instance.dir, "editor.sock"), { force: true });
  }
}
