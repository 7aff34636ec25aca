// Hosted instances at run time: the one place the API drives a runtime driver. It turns the
// desired state (the `state` column), the action under way (`in_flight`) and what the driver
// reports into FlowFuse's `meta.state`; runs each action as one claim on the instance's row, so
// that actions on one instance are serialized across every process of the platform; gives each
// start of Node-RED a new instance token; and brings back, when the platform starts, the
// instances whose desired state is running.
// The actions and their claim are in actions.ts; what Node-RED starts with, spec.ts.
import { generateToken, tokenDigest } from "@flowplane/auth";
import type { InstanceState } from "@flowplane/contract";
import {
  announceProjectRuntime,
  type Db,
  findProject,
  finishProjectAction,
  listProjects,
  type ProjectDetail,
  setProjectToken,
} from "@flowplane/db";
import { type Driver, ModuleInstallError, type RuntimeStatus } from "@flowplane/runtime";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { ApiError, notFound } from "../core/errors";
import {
  claimAction,
  DESIRED,
  IN_FLIGHT,
  message,
  metaState,
  suspendedError,
  type Action,
  type Actor,
} from "./actions";
import { recordActionDone, recordStartFailed } from "./events";
import { instanceSpec, moduleInstallFailed, type PlatformAddresses } from "./spec";

export interface RuntimeOptions extends PlatformAddresses {
  db: Db;
  driver: Driver;
  tokenSecret: string;
  log: FastifyBaseLogger;
}

export class InstanceRuntime {
  /** Set by `close`: what fails from then on is the shutdown, not the instance. */
  private closing = false;
  /** Each instance's announcements under way (`project.crashed`, `project.recovered`). */
  private readonly announcing = new Map<string, Promise<void>>();

  constructor(private readonly options: RuntimeOptions) {
    // What the runtime reports on its own is announced: `project.crashed` when Node-RED dies (or
    // could not start), `project.recovered` when it runs again after that. The driver runs in
    // this process only, so this process alone hears it; the stored crash makes each told once.
    options.driver.onStateChange((id, status) => {
      if (status.state !== "crashed" && status.state !== "running") return;
      if (status.state === "crashed") {
        options.log.warn({ instanceId: id, detail: status.detail }, "instance crashed");
      }
      const report =
        status.state === "crashed"
          ? { crashed: true as const, reason: status.detail ?? null }
          : { crashed: false as const };
      // In the order the runtime told them: a crash and the start after it, never the other way.
      const announced = (this.announcing.get(id) ?? Promise.resolve())
        .then(() => announceProjectRuntime(options.db, id, report))
        .catch((error: unknown) =>
          options.log.error({ err: error, instanceId: id }, "instance state not announced"),
        )
        .finally(() => {
          if (this.announcing.get(id) === announced) this.announcing.delete(id);
        });
      this.announcing.set(id, announced);
    });
  }

  get driverName(): string {
    return this.options.driver.name;
  }

  async status(
    project: Pick<ProjectDetail, "id" | "name" | "state" | "in_flight">,
  ): Promise<{ meta: { state: InstanceState }; url: string | null; runtime: RuntimeStatus }> {
    const runtime = await this.options.driver.status(project.id);
    // The editor's address is the platform's proxy on the instance's own host, whatever its
    // state (the proxy says when it is not running); never a port of the instance's.
    const url = runtime.state === "absent" ? null : this.options.hosts.editorUrl(project.name);
    return { meta: { state: metaState(project, runtime) }, url, runtime };
  }

  logs: Driver["logs"] = (id, query) => this.options.driver.logs(id, query);

  isolation: Driver["isolation"] = () => this.options.driver.isolation();

  /**
   * Runs an action on an instance and waits for it: after any action under way on the same
   * instance, in whichever process. Actions that make no sense in the state the instance is in
   * when its turn comes are refused with FlowFuse's code.
   */
  async act(id: string, action: Action, actor: Actor | "system"): Promise<void> {
    const claimed = await claimAction(this.options.db, id, IN_FLIGHT[action]);
    let state = claimed.state;
    try {
      if (action !== "start" && state === "suspended") throw suspendedError();
      await this.run(id, action);
      // Deleted meanwhile (with its team, or its owner's account): its Node-RED goes too.
      if (!(await this.stillThere(id))) throw notFound();
      state = DESIRED[action];
      await this.options.db.transaction().execute(async (trx) => {
        await finishProjectAction(trx, id, state);
        await recordActionDone(trx, action, actor, {
          id,
          name: claimed.name,
          team_id: claimed.team_id,
        });
      });
    } catch (error) {
      // The desired state the action aimed at stays recorded when the runtime failed (the
      // instance then shows what the runtime reports, `crashed` with its log); a refusal changes
      // nothing.
      const refused = error instanceof ApiError;
      if (refused) {
        await finishProjectAction(this.options.db, id, claimed.state);
        throw error;
      }
      // The instance was deleted under the action (with its team): nothing to start any more.
      if (!(await this.stillThere(id))) throw notFound();
      if (this.closing) {
        await finishProjectAction(this.options.db, id, DESIRED[action]);
        throw new ApiError(
          503,
          "runtime_unavailable",
          `The platform is shutting down: the instance did not ${action}; it is ${DESIRED[action]} again when the platform starts`,
        );
      }
      await this.options.db.transaction().execute(async (trx) => {
        await finishProjectAction(trx, id, DESIRED[action]);
        // FlowFuse's event for a Node-RED that would not start (a stop that failed has none,
        // and neither has a start the platform's shutdown refused).
        if (DESIRED[action] === "running" && !this.closing) {
          await recordStartFailed(trx, claimed, actor, error);
        }
      });
      // The instance's log says what npm said; its state is `crashed` until the modules change.
      if (error instanceof ModuleInstallError) throw moduleInstallFailed(error);
      this.options.log.error({ err: error, instanceId: id, action }, "instance action failed");
      throw new ApiError(
        500,
        "unexpected_error",
        `The instance could not ${action}: ${message(error)}`,
      );
    }
  }

  /**
   * Replaces what the instance runs (a rollback to a snapshot), as one action on the instance:
   * a running Node-RED is stopped, `write` changes what is stored and returns how to undo it,
   * and Node-RED starts again on the new content. When that start fails, the content is put
   * back and Node-RED started on it again, and the failure is answered: nothing is lost.
   * `record` writes the audit entry in the transaction that ends the action.
   */
  async replace(
    id: string,
    write: () => Promise<() => Promise<void>>,
    record: (trx: Db) => Promise<void>,
  ): Promise<void> {
    const claimed = await claimAction(this.options.db, id, "restarting");
    const running = claimed.state === "running";
    try {
      if (running) {
        await setProjectToken(this.options.db, id, null);
        await this.options.driver.stop(id);
      }
      const startAgain = () =>
        this.run(id, "start").catch((again: unknown) => {
          this.options.log.error(
            { err: again, instanceId: id },
            "an instance did not start again on the content it had before a rollback",
          );
        });
      let undo: () => Promise<void>;
      try {
        undo = await write();
      } catch (error) {
        // Nothing was written (one transaction): the instance goes back to what it ran.
        if (running) await startAgain();
        throw error;
      }
      if (running) {
        try {
          await this.run(id, "start");
        } catch (error) {
          await undo();
          await startAgain();
          throw error;
        }
      }
      await this.options.db.transaction().execute(async (trx) => {
        await finishProjectAction(trx, id, claimed.state);
        await record(trx);
      });
    } catch (error) {
      await finishProjectAction(this.options.db, id, claimed.state);
      if (error instanceof ApiError) throw error;
      if (error instanceof ModuleInstallError) {
        throw new ApiError(
          400,
          "module_install_failed",
          `${error.message}; the instance runs what it ran before the rollback`,
        );
      }
      this.options.log.error({ err: error, instanceId: id }, "a rollback failed");
      throw new ApiError(
        500,
        "unexpected_error",
        `The instance could not start on the snapshot; it runs what it ran before: ${message(error)}`,
      );
    }
  }

  /** A new instance: the runtime claims what it needs, then Node-RED starts in the background. */
  async created(id: string): Promise<void> {
    const project = await findProject(this.options.db, id);
    if (!project) return;
    try {
      await this.options.driver.create(await instanceSpec(this.options, project, ""));
    } catch (error) {
      // Recorded all the same: it shows what the runtime reports, and `start` tries again.
      this.options.log.error(
        { err: error, instanceId: id },
        "the runtime could not create an instance",
      );
      await finishProjectAction(this.options.db, id, "running");
      return;
    }
    void this.run(id, "start")
      .then(async () => {
        if (await this.stillThere(id)) await finishProjectAction(this.options.db, id, "running");
      })
      .catch(async (error: unknown) => {
        if (!this.closing) {
          this.options.log.error({ err: error, instanceId: id }, "a new instance did not start");
        }
        await this.options.db
          .transaction()
          .execute(async (trx) => {
            await finishProjectAction(trx, id, "running");
            if (!this.closing) await recordStartFailed(trx, project, "system", error);
          })
          .catch(() => {});
      });
  }

  /**
   * Deletes an instance: after any action under way on it, `deleteRow` (its row and audit entry,
   * in one transaction), then its Node-RED and files. In that order, so that no row is ever left
   * whose Node-RED is gone: what a stop or a crash leaves of the runtime's side is removed at the
   * next start (`resume`).
   */
  async remove(id: string, deleteRow: () => Promise<void>): Promise<void> {
    const claimed = await claimAction(this.options.db, id, "stopping");
    try {
      await deleteRow();
    } catch (error) {
      await finishProjectAction(this.options.db, id, claimed.state).catch(() => {});
      throw error;
    }
    await this.discard([id]);
  }

  /**
   * Instances whose rows went with their team (a team deleted, an account deleted with the teams
   * it owned alone): their Node-RED processes and files go too.
   */
  async discard(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      await this.options.driver.remove(id).catch((error: unknown) => {
        this.options.log.error({ err: error, instanceId: id }, "could not remove an instance");
      });
    }
  }

  /**
   * The platform started: what the runtime holds of instances deleted while it was stopping or
   * down goes, and instances whose desired state is running come back.
   */
  async resume(): Promise<void> {
    const held = await this.options.driver.ids();
    const known = new Set(
      held.length === 0
        ? []
        : (
            await this.options.db
              .selectFrom("projects")
              .select("id")
              .where("id", "in", held)
              .execute()
          ).map((row) => row.id),
    );
    const orphans = held.filter((id) => !known.has(id));
    if (orphans.length > 0) {
      this.options.log.info({ instances: orphans }, "removing what deleted instances left");
      await this.discard(orphans);
    }
    // Actions under way when the platform stopped never finished: with a local driver this
    // process is the only one running instances, so none is under way now.
    await this.options.db
      .updateTable("projects")
      .set({ in_flight: null, in_flight_at: null })
      .where("in_flight", "is not", null)
      .execute();
    const running = await listProjects(this.options.db, { state: "running" });
    const restarted: string[] = [];
    for (const project of running) {
      if (this.closing) return;
      try {
        await this.act(project.id, "start", "system");
        restarted.push(project.name);
      } catch (error) {
        this.options.log.error(
          { err: error, instanceId: project.id },
          `could not restart the instance ${project.name}`,
        );
      }
    }
    if (running.length > 0) {
      this.options.log.info(
        { instances: restarted },
        `restarted ${restarted.length} of the ${running.length} instances that were running: ${restarted.join(", ") || "none"}`,
      );
    }
  }

  close(): Promise<void> {
    this.closing = true;
    return this.options.driver.close();
  }

  /** Whether the instance still exists; if not, whatever the runtime holds of it goes now. */
  private async stillThere(id: string): Promise<boolean> {
    if (await findProject(this.options.db, id)) return true;
    await this.discard([id]);
    return false;
  }

  private async run(id: string, action: Action): Promise<void> {
    const { driver, db } = this.options;
    const project = await findProject(db, id);
    if (!project) throw notFound();
    if (action === "stop" || action === "suspend") {
      await setProjectToken(db, id, null);
      await (action === "stop" ? driver.stop(id) : driver.suspend(id));
      return;
    }
    // Every start of Node-RED gets a token of its own; the one before stops working.
    const token = generateToken("instance");
    await setProjectToken(db, id, tokenDigest(this.options.tokenSecret, token));
    const spec = await instanceSpec(this.options, project, token);
    await driver.create(spec);
    await (action === "restart" ? driver.restart(spec) : driver.start(spec));
  }
}

declare module "../core/trpc" {
  interface Context {
    /** Runs hosted instances (none: no driver configured). */
    instances?: InstanceRuntime;
  }
}

declare module "../plugins/area" {
  interface AppOptions {
    /** What runs hosted instances (none: instances can be created but not run: 503). */
    instances?: { driver: Driver };
    /**
     * The domain under which instances' editors have their hosts (`<name>.<domain>`, on BASE_URL's
     * scheme and port; default `localhost`). Never BASE_URL's own host.
     */
    editorDomain?: string;
  }
}

/**
 * Resumes the instances that should run once the server listens (in the background: a start is
 * not held up by them), and stops every one of them before the server closes.
 */
export function runWithServer(app: FastifyInstance, runtime: InstanceRuntime) {
  let resuming: Promise<void> = Promise.resolve();
  app.addHook("onListen", async () => {
    resuming = runtime.resume().catch((error: unknown) => {
      app.log.error({ err: error }, "resuming instances failed");
    });
  });
  app.addHook("preClose", async () => {
    await runtime.close();
    await resuming;
  });
}
