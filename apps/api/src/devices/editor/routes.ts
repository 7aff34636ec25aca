// The remote editor's routes outside tRPC: where a person opens a device's editor (their platform
// session; they go on to the device's own editor host with a one-time code), and where the
// device's Node-RED checks the token an admin request carries (the agent's settings.js asks with
// `x-access-token` before it lets the request in, and keeps the answer 30 s).
import { Role } from "@flowplane/contract";
import { type Db, findDeviceEditor, findTeamForUser } from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError, notFound, unauthorized } from "../../core/errors";
import { underApi } from "../../core/rest";
import { type RouteDoc, routeUrl } from "../../core/route-docs";
import { TAG } from "../procedures";
import { AGENT_TAG } from "../live-schemas";
import { signInPath } from "./gate";
import type { DeviceEditor } from "./service";

const params = z.object({ deviceId: z.string().describe("The device's id") });

const OPEN: RouteDoc = {
  id: "devices-openEditor",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/editor/open",
  tags: [TAG],
  summary: "Open a device's remote editor in the browser",
  description:
    "A browser's navigation with the person's session (without one: the sign-in page first, then back here). A member of the device's team (viewers read only) is sent on (303) to the device's own editor host with a one-time code, which that host exchanges for a session of its own. 503 `editor_disabled` when the device's editor is not open.",
  security: "bearerAuth",
  rateLimit: "global",
  params,
  responses: {
    302: { description: "A browser without a session: to the sign-in page, which comes back here" },
    303: { description: "On to the device's editor host, with a one-time code" },
    401: { description: "No session (`unauthorized`)" },
    404: { description: "No such device in the person's teams (`not_found`)" },
    503: { description: "The device's editor is not enabled (`editor_disabled`)" },
  },
};

const TOKEN: RouteDoc = {
  id: "deviceAgent-editorToken",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/editor/token",
  tags: [AGENT_TAG],
  summary: "Check a remote editor's token (the device's Node-RED)",
  description:
    "The device's Node-RED asks, with the token in the `x-access-token` header, whether an admin request's token is the device's current editor token: 200 with who it stands for, 401 otherwise.",
  security: "none",
  // Counted only under the global limit: Node-RED keeps each answer 30 s.
  rateLimit: "global",
  params,
  responses: {
    200: {
      description: "The device's current editor token",
      schema: z.object({ username: z.string(), permissions: z.string() }),
    },
    401: { description: "Not the device's current editor token (`unauthorized`)" },
  },
};

export const DEVICE_EDITOR_DOCS: RouteDoc[] = [OPEN, TOKEN];

/** GET …/editor/token, for the device's Node-RED (no other credential). */
export async function editorTokenRoute(
  app: FastifyInstance,
  { db, editor }: { db: Db; editor: DeviceEditor },
) {
  app.get<{ Params: { deviceId: string } }>(routeUrl(TOKEN), async (request, reply) => {
    const token = request.headers["x-access-token"];
    const device = await findDeviceEditor(db, request.params.deviceId).catch(() => undefined);
    if (
      typeof token !== "string" ||
      token.length > 256 ||
      !device?.editor_token_digest ||
      editor.digest(token) !== device.editor_token_digest
    ) {
      throw unauthorized();
    }
    // Who the editor shows as signed in: the tunnel, which people reach through the platform.
    return reply.send({ username: "flowplane", permissions: "*" });
  });
}

/** GET …/editor/open: the person signed in to the device's editor host. */
export async function openEditorRoute(
  app: FastifyInstance,
  { db, editor }: { db: Db; editor: DeviceEditor },
) {
  app.get<{ Params: { deviceId: string } }>(underApi(routeUrl(OPEN)), async (request, reply) => {
    const auth = request.auth;
    if (!auth || (auth.kind !== "session" && auth.kind !== "token")) {
      throw unauthorized();
    }
    const device = await findDeviceEditor(db, request.params.deviceId).catch(() => undefined);
    const role = device && (await findTeamForUser(db, device.team_id, auth.userId))?.role;
    if (!device || role === undefined || role < Role.viewer) throw notFound();
    if (device.mode !== "developer" || !device.editor_token_digest) {
      throw new ApiError(
        503,
        "editor_disabled",
        "The device's editor is not enabled: developer mode, then PUT /devices/{deviceId}/editor {enabled: true}",
      );
    }
    const code = editor.sessions.issueCode(auth.userId, device.id);
    const target = new URL(signInPath, editor.hosts.editorUrl(device.id));
    target.searchParams.set("code", code);
    return reply.redirect(target.toString(), 303);
  });
}
