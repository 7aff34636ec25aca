// The devices list's bulk form (POST /teams/:teamId/devices/bulk): the checked devices moved to an
// application, a hosted instance or a device group of the team (or unassigned, or out of their
// groups), or deleted — through the API's bulk procedures. The API refuses a whole request when
// one device of it may not go; the page then sends each device alone, so that one bad device fails
// only itself, and shows what became of each. A delete asks first (the script's confirm(), or a
// page of its own without script).
import type { BulkMoveDevicesInput } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from "fastify";
import { router } from "../../core/trpc";
import { field, fields, type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendPage } from "../../pages/page";
import { teamPlace, teamRouter } from "../../teams/index";
import { deviceBulkProcedures } from "../bulk";
import { deviceProcedures } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const bulkProcedures = router({
  team: teamRouter,
  devices: router({ ...deviceProcedures, ...deviceBulkProcedures }),
});

type Caller = ReturnType<typeof bulkProcedures.createCaller>;
type Params = { teamId: string };
type Move = Omit<BulkMoveDevicesInput, "teamId" | "devices">;

/** What became of each device checked. */
export interface BulkOutcome {
  action: "move" | "delete";
  items: { id: string; name: string; ok: boolean; message?: string }[];
}

/** What the page shows the list with: its outcome, or the error that stopped the whole form. */
export type ShowList = (
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  state: { bulk?: BulkOutcome; bulkError?: FormError },
  status: number,
) => Promise<unknown>;

/** The move's target as the form's `target` select names it. */
function moveOf(target: string): Move | undefined {
  if (target === "none") return { application: null, instance: null };
  if (target === "no-group") return { deviceGroup: null };
  const [kind, id] = target.split(":");
  if (!id) return undefined;
  if (kind === "application") return { application: id };
  if (kind === "instance") return { instance: id };
  if (kind === "group") return { deviceGroup: id };
  return undefined;
}

/** A device's name for the outcome: only a device of this team is named. */
async function nameOf(caller: Caller, teamId: string, id: string) {
  try {
    const device = await caller.devices.byId({ deviceId: id });
    return device.team.id === teamId ? device.name : "A device not of this team";
  } catch {
    return "An unknown device";
  }
}

const noneChecked = (): FormError => ({
  status: 400,
  code: "invalid_input",
  message: "Check the devices to move or delete first.",
  fields: {},
  reasons: [],
});

export function bulkRoutes(
  app: FastifyInstance,
  deps: PageDeps,
  route: RouteShorthandOptions,
  showList: ShowList,
) {
  app.post<{ Params: Params }>("/teams/:teamId/devices/bulk", route, async (request, reply) => {
    const { teamId } = request.params;
    const caller = bulkProcedures.createCaller(deps.context(request));
    const ids = [...new Set(fields(request.body, "devices"))];
    const action = field(request.body, "action") === "delete" ? "delete" : "move";
    const move = action === "move" ? moveOf(field(request.body, "target") ?? "") : undefined;
    if (ids.length === 0) return showList(request, reply, { bulkError: noneChecked() }, 400);
    if (action === "move" && !move) {
      const error = { ...noneChecked(), message: "Choose where to move the devices." };
      return showList(request, reply, { bulkError: error }, 400);
    }
    if (action === "delete" && field(request.body, "confirmed") !== "yes") {
      // No script ran to ask: ask on a page.
      const place = await teamPlace(caller.team, teamId);
      const devices = await Promise.all(
        ids.map(async (id) => ({ id, name: await nameOf(caller, teamId, id) })),
      );
      return sendPage(deps, request, reply, "devices/pages/devices-confirm", {
        title: "Delete devices",
        place,
        devices,
      });
    }
    const run = (devices: string[]) =>
      action === "delete"
        ? caller.devices.bulkDelete({ teamId, devices })
        : caller.devices.bulkMove({ teamId, devices, ...move });
    try {
      await run(ids);
      return reply.redirect(`/teams/${encodeURIComponent(teamId)}/devices?done=${action}d`, 303);
    } catch (error) {
      // A refusal of the whole goes on below, each device alone; anything else stops here.
      const failed = formError(request, reply, error);
      if (failed.status >= 500 || failed.status === 429) {
        return showList(request, reply, { bulkError: failed }, failed.status);
      }
    }
    const items: BulkOutcome["items"] = [];
    let failure: FormError | undefined;
    for (const id of ids) {
      const name = await nameOf(caller, teamId, id);
      try {
        await run([id]);
        items.push({ id, name, ok: true });
      } catch (error) {
        const failed = formError(request, reply, error);
        failure ??= failed;
        items.push({ id, name, ok: false, message: failed.reasons[0] ?? failed.message });
      }
    }
    const anyDone = items.some((item) => item.ok);
    return showList(
      request,
      reply,
      { bulk: { action, items } },
      anyDone ? 200 : (failure?.status ?? 400),
    );
  });
}
