// Rollouts (Flowplane's; FlowFuse sends a group's target to every member at once): owners start,
// approve, pause, resume and abort them; viewers and up read them. The runner (runner.ts) moves
// them on; these procedures plan, record and change their state.
import {
  ApplicationRolloutsInput,
  CreateRolloutInput,
  GroupRolloutsInput,
  Rollout,
  RolloutIdInput,
  RolloutList,
  RolloutOrPlan,
} from "@flowplane/contract";
import {
  ACTIVE_ROLLOUT_STATES,
  type Db,
  findApplication,
  findDeviceGroup,
  findRollout,
  insertRollout,
  listRollouts,
  type RolloutDetail,
  rolloutDevices,
  updateRollout,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure, teamOf } from "../core/trpc";
import { recordRolloutEvent } from "./events";
import { planRollout, plannedDevices } from "./plan";
import { endRollout } from "./runner";
import { planView, rolloutSummaryView, rolloutView } from "./views";

const TAG = "Rollouts";

declare module "../core/trpc" {
  interface Context {
    /** Moves rollouts on at once after a change (else at its next tick). */
    rollouts?: { poke(): void };
  }
}

const wrongState = (rollout: RolloutDetail, action: string, allowed: string) =>
  new ApiError(
    409,
    "invalid_rollout_state",
    `The rollout is ${rollout.state.replace("_", " ")}: only ${allowed} rollout can be ${action}`,
  );

async function viewOf(ctx: Pick<Context, "db" | "baseUrl">, id: string) {
  const rollout = await findRollout(ctx.db, id);
  if (!rollout) throw notFound();
  return rolloutView(rollout, await rolloutDevices(ctx.db, id), ctx.baseUrl);
}

/** The rollout, its row held for the change; the change; its view after. */
async function change(
  ctx: Context,
  rolloutId: string,
  apply: (trx: Db, rollout: RolloutDetail) => Promise<void>,
) {
  await ctx.db.transaction().execute(async (trx) => {
    const rollout = await findRollout(trx, rolloutId, "wait");
    if (!rollout) throw notFound();
    await apply(trx, rollout);
  });
  ctx.rollouts?.poke();
  return viewOf(ctx, rolloutId);
}

const listDescription =
  "Newest first, a page at a time (`meta.next_cursor`); `state` keeps only the rollouts in that state.";

function action(
  verb: "pause" | "resume" | "abort" | "approve",
  summary: string,
  description: string,
  apply: (ctx: Context, trx: Db, rollout: RolloutDetail) => Promise<void>,
) {
  return procedure
    .meta({
      permission: "rollout:edit",
      errors: [409],
      openapi: {
        method: "POST",
        path: `/api/v1/rollouts/{rolloutId}/${verb}`,
        tags: [TAG],
        summary,
        description: `${description} Answers the rollout. Members and viewers get 403, whatever the rollout's state.`,
      },
    })
    .input(RolloutIdInput)
    .output(Rollout)
    .mutation(({ ctx, input }) =>
      change(ctx, input.rolloutId, (trx, rollout) => apply(ctx, trx, rollout)),
    );
}

export const rolloutProcedures = {
  create: procedure
    .meta({
      create: "replay",
      permission: "rollout:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/rollouts",
        tags: [TAG],
        summary: "Roll a snapshot out to devices, wave by wave, gated on their health (owners)",
        description:
          "The target is a device group (`deviceGroupId`) or devices of one application named one by one (`devices`; not members of a group that has a target); the snapshot must be of that application. `waves` are `{count}` or `{percent}` (rounded up), in order, the last taking the rest: no wave, a count below 1 or a percentage outside (0, 100] is 400 `invalid_request` naming the field; a first wave larger than the target, a wave asking more devices than are left, or one left with none is 400 `invalid_waves` naming the wave; nothing is created either way. A device another rollout under way holds, or a group with one under way, is 409 `rollout_in_progress`. `dryRun: true` answers the plan (each wave's devices, what each runs now and will run) and changes nothing. Else the rollout starts (at `startAt`, when given) and its state is answered; the gate and the rollback are explained in docs/rollouts.md.",
      },
    })
    .input(CreateRolloutInput)
    .output(RolloutOrPlan)
    .mutation(async ({ ctx, input }) => {
      const team = teamOf(ctx);
      const id = await ctx.db.transaction().execute(async (trx) => {
        const plan = await planRollout(trx, input);
        if (input.dryRun) {
          const application = await findApplication(trx, plan.applicationId);
          return planView(plan, input, application?.name ?? "");
        }
        const startAt = input.startAt === undefined ? null : new Date(input.startAt);
        const auth = actorOf(ctx);
        const rolloutId = await insertRollout(
          trx,
          {
            teamId: team.team.id,
            applicationId: plan.applicationId,
            deviceGroup: plan.deviceGroup,
            snapshot: plan.snapshot,
            state: startAt !== null && startAt > new Date() ? "scheduled" : "running",
            waves: input.waves,
            soakSeconds: input.soakSeconds,
            reportTimeoutSeconds: input.reportTimeoutSeconds,
            maxFailures: input.maxFailures,
            requireApproval: input.requireApproval,
            startAt,
            createdBy: auth === "system" ? null : auth.userId,
          },
          plannedDevices(plan),
        );
        const rollout = (await findRollout(trx, rolloutId))!;
        await recordRolloutEvent(trx, rollout, auth, "created", {
          target: plan.deviceGroup
            ? { deviceGroup: plan.deviceGroup }
            : { devices: plan.waves.flat().map((d) => ({ id: d.id, name: d.name })) },
          waves: plan.waves.map((devices) => devices.length),
        });
        return rolloutId;
      });
      if (typeof id !== "string") return id;
      ctx.rollouts?.poke();
      return viewOf(ctx, id);
    }),

  byId: procedure
    .meta({
      permission: "rollout:read",
      openapi: {
        method: "GET",
        path: "/api/v1/rollouts/{rolloutId}",
        tags: [TAG],
        summary: "A rollout: its state, each wave's and each device's (viewers and up)",
      },
    })
    .input(RolloutIdInput)
    .output(Rollout)
    .query(({ ctx, input }) => viewOf(ctx, input.rolloutId)),

  ofApplication: procedure
    .meta({
      permission: "application:rollout:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/rollouts",
        tags: [TAG],
        summary: "An application's rollouts (viewers and up)",
        description: listDescription,
      },
    })
    .input(ApplicationRolloutsInput)
    .output(RolloutList)
    .query(async ({ ctx, input }) => listView(ctx, { applicationId: input.applicationId }, input)),

  ofGroup: procedure
    .meta({
      permission: "application:rollout:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}/rollouts",
        tags: [TAG],
        summary: "A device group's rollouts (viewers and up)",
        description: listDescription,
      },
    })
    .input(GroupRolloutsInput)
    .output(RolloutList)
    .query(async ({ ctx, input }) => {
      const group = await findDeviceGroup(ctx.db, input.applicationId, input.groupId);
      if (!group) throw notFound();
      return listView(ctx, { applicationId: input.applicationId, groupId: group.id }, input);
    }),

  pause: action(
    "pause",
    "Pause a rollout (owners)",
    "No device is deployed and no wave starts until it is resumed; the devices already deployed are still watched, and a failure past the budget still rolls back. Only a scheduled, running or waiting rollout can be paused (409 `invalid_rollout_state`).",
    async (ctx, trx, rollout) => {
      if (!["scheduled", "running", "waiting_approval"].includes(rollout.state)) {
        throw wrongState(rollout, "paused", "a scheduled, running or waiting");
      }
      await updateRollout(trx, rollout.id, { state: "paused" });
      await recordRolloutEvent(trx, rollout, actorOf(ctx), "paused", { from: rollout.state });
    },
  ),

  resume: action(
    "resume",
    "Resume a paused rollout (owners)",
    "It goes on where it stopped (a wave that needs approval waits for it again). Only a paused rollout can be resumed (409 `invalid_rollout_state`).",
    async (ctx, trx, rollout) => {
      if (rollout.state !== "paused") throw wrongState(rollout, "resumed", "a paused");
      const scheduled = rollout.start_at !== null && rollout.start_at > new Date();
      const started = rollout.wave_times.length > 0;
      await updateRollout(trx, rollout.id, {
        state: scheduled && !started ? "scheduled" : "running",
      });
      await recordRolloutEvent(trx, rollout, actorOf(ctx), "resumed");
    },
  ),

  approve: action(
    "approve",
    "Approve a rollout's next wave (owners)",
    "For a rollout that asked for approval (`requireApproval`) and waits for it between waves. Only a waiting rollout can be approved (409 `invalid_rollout_state`).",
    async (ctx, trx, rollout) => {
      if (rollout.state !== "waiting_approval") {
        throw wrongState(rollout, "approved", "a waiting");
      }
      const wave = rollout.current_wave + 1;
      await updateRollout(trx, rollout.id, { state: "running", approved_wave: wave });
      await recordRolloutEvent(trx, rollout, actorOf(ctx), "approved", { wave });
    },
  ),

  abort: action(
    "abort",
    "Abort a rollout (owners)",
    "Every device it deployed runs its target from before again (`rolled_back`, with the reason); devices of waves it never reached are untouched. A rollout that has ended cannot be aborted (409 `invalid_rollout_state`).",
    async (ctx, trx, rollout) => {
      if (!(ACTIVE_ROLLOUT_STATES as readonly string[]).includes(rollout.state)) {
        throw wrongState(rollout, "aborted", "an unfinished");
      }
      const devices = await rolloutDevices(trx, rollout.id);
      await endRollout(
        trx,
        rollout,
        devices,
        "aborted",
        "Aborted by an owner",
        actorOf(ctx),
        new Date(),
      );
    },
  ),
};

async function listView(
  ctx: Pick<Context, "db" | "baseUrl">,
  of: { applicationId: string; groupId?: string },
  input: { limit: number; cursor?: string; state?: string },
) {
  const page = await listRollouts(ctx.db, of, input);
  return {
    meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
    count: page.total,
    rollouts: page.rows.map((row) => rolloutSummaryView(row, ctx.baseUrl)),
  };
}
