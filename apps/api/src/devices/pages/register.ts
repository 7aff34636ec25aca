// The page a device's registration leads its person to (/register/remote-instance/<token>, the
// `registerUrl` its agent printed): signed in, they pick a team they may create devices in (and,
// optionally, one of its applications), name the device and confirm. That creates the device
// through the API's own procedure (permissions, the team type's limit, audit entries) and completes
// the registration, whose poll then hands the agent the device and a one-time code.
import { PERMISSIONS } from "@flowplane/auth";
import {
  claimDeviceRegistration,
  completeDeviceRegistration,
  pendingDeviceRegistration,
  type WaitingDeviceRegistration,
  releaseDeviceRegistration,
} from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { userRouter } from "../../accounts/index";
import { applicationsRouter } from "../../applications/index";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { deviceProcedures } from "../procedures";
import { registrationDigest } from "../registration";

// The same procedures under the same names as the API's router (rate limits count by them).
const registrationProcedures = router({
  user: userRouter,
  applications: applicationsRouter,
  devices: router(deviceProcedures),
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  registrationProcedures.createCaller(deps.context(request));

type Params = { sessionToken: string };

/** The form as sent: `owner` is a team's id, or `<teamId>/<applicationId>`. */
interface Sent {
  name: string;
  type: string;
  owner: string;
}

const GONE =
  "This registration is not waiting for anyone: it was completed already, it expired (after 30 minutes), or its link is wrong. Start the registration again on the device.";

export function registrationPages(app: FastifyInstance, deps: PageDeps) {
  const pageOf = (request: FastifyRequest<{ Params: Params }>) =>
    `/register/remote-instance/${encodeURIComponent(request.params.sessionToken)}`;
  const route = {
    ...pageRoute,
    preHandler: async (request: FastifyRequest, reply: FastifyReply) =>
      signedIn({ page: pageOf(request as FastifyRequest<{ Params: Params }>) })(request, reply),
  };

  /** The page's registration (its digest, where and when it was asked for) when it waits. */
  async function waiting(request: FastifyRequest<{ Params: Params }>) {
    const digest = registrationDigest(
      deps.context(request).tokenSecret,
      request.params.sessionToken,
    );
    if (!digest) return undefined;
    const asked = await pendingDeviceRegistration(deps.context(request).db, digest);
    return asked && { digest, asked };
  }

  const gone = (request: FastifyRequest, reply: FastifyReply) =>
    sendPage(
      deps,
      request,
      reply,
      "pages/templates/error",
      {
        title: "No such registration",
        message: GONE,
        back: { href: "/teams", label: "Go to your teams" },
      },
      404,
    );

  /** The teams the person may create devices in, each with its applications. */
  async function choices(caller: ReturnType<typeof callerOf>) {
    const minimum = PERMISSIONS["device:create"].role;
    const { teams } = await caller.user.teams();
    const allowed = teams.filter((team) => team.role >= minimum);
    return Promise.all(
      allowed.map(async (team) => ({
        id: team.id,
        name: team.name,
        applications: (await caller.applications.ofTeam({ teamId: team.id })).applications.map(
          (application) => ({ id: application.id, name: application.name }),
        ),
      })),
    );
  }

  async function renderForm(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    asked: WaitingDeviceRegistration,
    sent: Sent = { name: "", type: "", owner: "" },
    error?: FormError,
  ) {
    const teams = await choices(callerOf(deps, request));
    return sendPage(
      deps,
      request,
      reply,
      "devices/pages/register",
      {
        title: "Register a remote instance",
        action: pageOf(request),
        teams,
        sent,
        error,
        askedFrom: asked.requestedFrom ?? "an unknown address",
        askedAt: `${asked.createdAt.toISOString().slice(0, 19).replace("T", " ")} UTC`,
      },
      error?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>(
    "/register/remote-instance/:sessionToken",
    route,
    async (request, reply) => {
      const found = await waiting(request);
      if (!found) return gone(request, reply);
      return renderForm(request, reply, found.asked);
    },
  );

  app.post<{ Params: Params }>(
    "/register/remote-instance/:sessionToken",
    route,
    async (request, reply) => {
      const sent: Sent = {
        name: field(request.body, "name") ?? "",
        type: field(request.body, "type") ?? "",
        owner: field(request.body, "owner") ?? "",
      };
      const found = await waiting(request);
      const digest = found?.digest;
      const { db } = deps.context(request);
      // Taken for this form while it creates the device: another person's form, or a second send,
      // finds it taken.
      if (!digest || !(await claimDeviceRegistration(db, digest))) return gone(request, reply);
      const [team, application] = sent.owner.split("/");
      let device: { id: string; name: string };
      try {
        device = await callerOf(deps, request).devices.create({
          name: sent.name,
          ...(sent.type !== "" && { type: sent.type }),
          team: team ?? "",
          ...(application !== undefined && { application }),
        });
      } catch (error) {
        await releaseDeviceRegistration(db, digest);
        return renderForm(request, reply, found!.asked, sent, formError(request, reply, error));
      }
      if (!(await completeDeviceRegistration(db, digest, device.id))) {
        // Expired and swept while the device was made: no agent can take it, so it is not kept.
        await callerOf(deps, request).devices.delete({ deviceId: device.id });
        return gone(request, reply);
      }
      return sendPage(deps, request, reply, "devices/pages/registered", {
        title: "Remote instance registered",
        device,
        team: (await choices(callerOf(deps, request))).find((choice) => choice.id === team),
      });
    },
  );
}
