// What the forms of an instance's page (GET /teams/:teamId/instances/:instanceId) share: the
// caller of the API's procedures the page uses (the instance's, its snapshots', its devices'), the
// instance read as this team's (another team's is 404), and the page itself, rendered with the
// error of the form that failed beside that form. The page lives in the snapshots area because it
// shows the instance's snapshots and devices too: the instances area may not import those areas
// (they import it), while this one may import both.
import type { InstanceState } from "@flowplane/contract";
import type { FastifyReply, FastifyRequest } from "fastify";
import { devices } from "../../devices/index";
import { ApiError, notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import { instancesRouter } from "../../instances/index";
import { type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { teamPlace, teamRouter } from "../../teams/index";
import { snapshotsRouter } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const instancePageProcedures = router({
  team: teamRouter,
  instances: instancesRouter,
  snapshots: snapshotsRouter,
  devices: devices.procedures.devices,
});

export type InstancePageCaller = ReturnType<typeof instancePageProcedures.createCaller>;

export const callerOf = (deps: PageDeps, request: FastifyRequest): InstancePageCaller =>
  instancePageProcedures.createCaller(deps.context(request));

export type InstanceParams = { teamId: string; instanceId: string };

export const instancePath = ({ teamId, instanceId }: InstanceParams) =>
  `/teams/${encodeURIComponent(teamId)}/instances/${encodeURIComponent(instanceId)}`;

/** The instance, when it is this team's: another team's is not this page's (404). */
export async function instanceOf(caller: InstancePageCaller, params: InstanceParams) {
  const instance = await caller.instances.get({ instanceId: params.instanceId });
  if (instance.team.id !== params.teamId) throw notFound();
  return instance;
}

const NOTICES: Record<string, string> = {
  started: "The instance is started.",
  stopped: "The instance is stopped.",
  restarted: "The instance is restarted.",
  suspended: "The instance is suspended.",
  renamed: "The instance is renamed.",
  "env-added": "The variable is added. It reaches Node-RED when the instance restarts.",
  "env-changed": "The variable is changed. It reaches Node-RED when the instance restarts.",
  "env-deleted": "The variable is deleted. Node-RED loses it when the instance restarts.",
  snapshot: "The snapshot is taken.",
  "rolled-back": "The instance is rolled back to the snapshot.",
  imported: "The snapshot is imported. Roll back to it to run it.",
};

/** The forms of the page: the failed one shows its error and what was sent. */
export type InstanceForm =
  "action" | "settings" | "env-add" | "env-change" | "snapshot" | "rollback" | "export" | "import";

export interface Failed {
  form: InstanceForm;
  error: FormError;
  /** What was sent (the fields to show again), and which row it was for. */
  values?: Record<string, string>;
}

/** States in which an action is under way: the page's script watches them settle. */
const ACTING = new Set<InstanceState>(["starting", "stopping", "restarting", "suspending"]);

/** The actions that make sense in a state (the API refuses the rest with its own message). */
function actionsIn(state: InstanceState): string[] {
  if (ACTING.has(state) || state === "unknown") return [];
  if (state === "running") return ["restart", "stop", "suspend"];
  if (state === "suspended") return ["start"];
  return ["start", "suspend"];
}

/** The log lines the page shows before its script follows the log. */
const LINES_SHOWN = 100;
/** The snapshots and devices the page lists. */
const LISTED = 50;

async function logOf(caller: InstancePageCaller, instanceId: string) {
  try {
    const page = await caller.instances.logs({ instanceId, limit: LINES_SHOWN });
    return { lines: page.log, cursor: page.meta.next_cursor };
  } catch (error) {
    // No driver: the platform runs no instances, so there is no log to show.
    if (error instanceof ApiError && error.apiCode === "runtime_unavailable") return undefined;
    throw error;
  }
}

export async function renderInstance(
  deps: PageDeps,
  request: FastifyRequest<{ Params: InstanceParams }>,
  reply: FastifyReply,
  failed?: Failed,
) {
  const caller = callerOf(deps, request);
  const { teamId, instanceId } = request.params;
  const place = await teamPlace(caller.team, teamId);
  const instance = await instanceOf(caller, request.params);
  const [log, snapshots, followers] = await Promise.all([
    place.can("project:log") ? logOf(caller, instanceId) : undefined,
    place.can("project:snapshot:list")
      ? caller.snapshots.ofInstance({ instanceId, limit: LISTED })
      : undefined,
    caller.devices.ofInstance({ instanceId, limit: LISTED }),
  ]);
  const state = instance.meta.state;
  const env = instance.settings.env;
  return sendPage(
    deps,
    request,
    reply,
    "snapshots/pages/instance",
    {
      title: instance.name,
      place,
      tab: "applications",
      instance,
      state,
      actions: actionsIn(state),
      ownEnv: env.filter((variable) => !variable.name.startsWith("FF_")),
      platformEnv: env.filter((variable) => variable.name.startsWith("FF_")),
      log,
      snapshots,
      devices: followers,
      failed,
      errorOf: (form: InstanceForm, row?: string) =>
        failed?.form === form && (row === undefined || failed.values?.row === row)
          ? failed.error
          : undefined,
      sent: (form: InstanceForm, name: string) =>
        failed?.form === form ? failed.values?.[name] : undefined,
      notice: failed ? undefined : noticeOf(request, NOTICES),
      path: instancePath(request.params),
      // While an action is under way, the page's script shows it again once it settles.
      watch:
        ACTING.has(state) && !failed ? `/api/v1/teams/${teamId}/applications/status` : undefined,
      script: "instance-log.js",
    },
    failed?.error.status ?? 200,
  );
}

/**
 * A form of the page: `work` done on this team's instance (another team's is 404) as the
 * caller; then back to the page with `?done=<done>`, or the page with the form's error.
 */
export async function onInstance(
  deps: PageDeps,
  request: FastifyRequest<{ Params: InstanceParams }>,
  reply: FastifyReply,
  form: { form: InstanceForm; values?: Record<string, string>; done: string },
  work: (
    caller: InstancePageCaller,
    instance: Awaited<ReturnType<typeof instanceOf>>,
  ) => Promise<unknown>,
  errorFields?: (error: FormError) => void,
) {
  const caller = callerOf(deps, request);
  try {
    await work(caller, await instanceOf(caller, request.params));
  } catch (error) {
    const failed = formError(request, reply, error);
    errorFields?.(failed);
    return renderInstance(deps, request, reply, { ...form, error: failed });
  }
  return reply.redirect(`${instancePath(request.params)}?done=${form.done}`, 303);
}
