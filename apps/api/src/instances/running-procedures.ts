// An instance at work: its state, its Node-RED log, a token for its editor and admin API, and the
// actions that start, stop, restart and suspend it through the runtime (instances/runtime.ts).
import {
  CreateEditorTokenInput,
  EditorToken,
  InstanceIdInput,
  InstanceLogs,
  InstanceLogsInput,
  InstanceStatus,
  Status,
} from "@flowplane/contract";
import { forbidden } from "../core/errors";
import type { Action } from "./actions";
import { actorOf, procedure, teamOf } from "../core/trpc";
import { editorRights, startEditorSession } from "./editor-sign-in";
import { instanceStatusOf } from "./views";
import { projectOf, runtimeOf, TAG } from "./instance-of";

function actionProcedure(action: Action, summary: string, description: string) {
  return procedure
    .meta({
      permission: "project:change-status",
      errors: [409, 503],
      openapi: {
        method: "POST",
        path: `/api/v1/projects/{instanceId}/actions/${action}`,
        tags: [TAG],
        summary,
        description: `${description} Answers once the action is done (FlowFuse answers at once and acts in the background); another action on the instance under way is waited for. 503 \`runtime_unavailable\` when the platform runs no instances.`,
      },
    })
    .input(InstanceIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await runtimeOf(ctx).act(input.instanceId, action, actorOf(ctx));
      return { status: "okay" as const };
    });
}

/** An instance's state, log, editor token and actions (after its records in the router). */
export const runningProcedures = {
  status: procedure
    .meta({
      permission: "project:status",
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/status",
        tags: [TAG],
        summary: "An instance's state (dashboard users and up)",
      },
    })
    .input(InstanceIdInput)
    .output(InstanceStatus)
    .query(async ({ ctx, input }) => instanceStatusOf(await projectOf(ctx, input.instanceId), ctx)),

  logs: procedure
    .meta({
      permission: "project:log",
      errors: [503],
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/logs",
        tags: [TAG],
        summary: "An instance's Node-RED log (viewers and up)",
        description:
          "The newest `limit` entries, oldest first; `cursor` = an entry's `ts` for the entries after it, `-ts` for those before it. `meta.previous_cursor` pages back, `meta.next_cursor` forward (poll it to follow the log). Unlike FlowFuse, a suspended instance's log is kept and served.",
      },
    })
    .input(InstanceLogsInput)
    .output(InstanceLogs)
    .query(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const backwards = input.cursor?.startsWith("-") ?? false;
      const cursor = input.cursor === undefined ? undefined : Math.abs(Number(input.cursor));
      const { entries } = await runtimeOf(ctx).logs(project.id, {
        cursor,
        backwards,
        limit: input.limit,
      });
      const first = entries[0];
      const last = entries.at(-1);
      return {
        meta: {
          ...(first && { previous_cursor: `-${first.ts}`, first_entry: String(first.ts) }),
          ...(last && { last_entry: String(last.ts) }),
          next_cursor: String(last?.ts ?? cursor ?? 0),
        },
        log: entries,
      };
    }),

  editorToken: procedure
    .meta({
      create: "secret",
      permission: "project:editor-token",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/editor/token",
        tags: [TAG],
        summary: "A token for one instance's editor and admin API (viewers and up)",
        description:
          "For scripts that call Node-RED's admin API (`Authorization: Bearer fpe_…` at the editor's `url`): it reaches that instance's editor and nothing else of the platform, so a person's own token never passes through the instance's process (which runs whatever its team deploys). Its rights are the caller's role of the moment in the team (members and owners deploy, viewers read); it ends at `expiresAt`, when unused for the sessions' idle time, and with the caller's sessions (a password change, `DELETE /api/v1/user/sessions`). Flowplane's own: FlowFuse's editors take no such token.",
      },
    })
    .input(CreateEditorTokenInput)
    .output(EditorToken)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const permissions = editorRights(teamOf(ctx).role);
      if (!permissions) throw forbidden();
      const expiresAt = new Date(Date.now() + (input.expiresIn ?? 3600) * 1000);
      const token = await startEditorSession(ctx, {
        userId: ctx.auth.userId,
        projectId: project.id,
        expiresAt,
        scripted: true,
      });
      const url = ctx.editorHosts.editorUrl(project.name);
      return { token, expiresAt: expiresAt.toISOString(), url, permissions };
    }),

  start: actionProcedure(
    "start",
    "Start an instance (owners)",
    "From stopped or suspended; a running one is left running.",
  ),
  stop: actionProcedure(
    "stop",
    "Stop an instance's Node-RED (owners)",
    "400 `project_suspended` when suspended.",
  ),
  restart: actionProcedure(
    "restart",
    "Restart an instance's Node-RED (owners)",
    "New variables take effect. 400 `project_suspended` when suspended.",
  ),
  suspend: actionProcedure(
    "suspend",
    "Suspend an instance (owners)",
    "Its Node-RED stops and its address is given back; its flows and files are kept. 400 `project_suspended` when already suspended.",
  ),
};
