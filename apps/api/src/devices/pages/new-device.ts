// Registering a device from the console (GET and POST /teams/:teamId/devices/new, owners): a form
// (name, type, optionally an application or a hosted instance of the team) that creates the
// device through the API's own procedure, and shows, in that one reply, its one-time code with the
// agent's command line, and the device.yml alternative. Neither is ever shown again: a reload of
// the form's address shows the empty form, and the device's page has neither.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { deviceProcedures } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const newDeviceProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  devices: router(deviceProcedures),
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  newDeviceProcedures.createCaller(deps.context(request));

type Params = { teamId: string };
type CreatedDevice = Awaited<ReturnType<ReturnType<typeof callerOf>["devices"]["create"]>>;

/** The form as sent: `owner` is `application:<id>`, `instance:<id>` or blank. */
interface Sent {
  name: string;
  type: string;
  owner: string;
}

/** The device.yml of a new device, as docs/devices.md shows it. */
function deviceYml(device: CreatedDevice, baseUrl: string) {
  const { credentials } = device;
  return [
    `deviceId: ${device.id}`,
    `token: ${credentials.token}`,
    `credentialSecret: ${credentials.credentialSecret}`,
    ...(credentials.broker
      ? [
          `brokerURL: ${credentials.broker.url}`,
          `brokerUsername: ${credentials.broker.username}`,
          `brokerPassword: ${credentials.broker.password}`,
        ]
      : []),
    `forgeURL: ${baseUrl}`,
    "",
  ].join("\n");
}

export function newDevicePages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  async function renderForm(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    sent: Sent = { name: "", type: "", owner: "" },
    error?: FormError,
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const applications = place.can("device:create")
      ? (await caller.applications.ofTeam({ teamId })).applications
      : [];
    return sendPage(
      deps,
      request,
      reply,
      "devices/pages/new-device",
      { title: `Register a device · ${place.team.name}`, place, applications, sent, error },
      error?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/devices/new", route, (request, reply) =>
    renderForm(request, reply),
  );

  app.post<{ Params: Params }>("/teams/:teamId/devices/new", route, async (request, reply) => {
    const { teamId } = request.params;
    const sent: Sent = {
      name: field(request.body, "name") ?? "",
      type: field(request.body, "type") ?? "",
      owner: field(request.body, "owner") ?? "",
    };
    const [kind, id] = sent.owner.split(":");
    const caller = callerOf(deps, request);
    let device: CreatedDevice;
    try {
      device = await caller.devices.create({
        name: sent.name,
        team: teamId,
        ...(sent.type !== "" && { type: sent.type }),
        ...(kind === "application" && id && { application: id }),
        ...(kind === "instance" && id && { instance: id }),
      });
    } catch (error) {
      return renderForm(request, reply, sent, formError(request, reply, error));
    }
    const { baseUrl } = deps.context(request);
    const place = await teamPlace(caller.team, teamId);
    // The code and the credentials go into this reply only (never kept, never logged).
    reply.header("cache-control", "no-store");
    return sendPage(deps, request, reply, "devices/pages/new-device-created", {
      title: `Device ${device.name} registered`,
      place,
      device,
      otc: device.credentials.otc,
      command: device.credentials.otc
        ? `flowfuse-device-agent --otc ${device.credentials.otc} --ff-url ${baseUrl}`
        : undefined,
      yml: deviceYml(device, baseUrl),
    });
  });
}
