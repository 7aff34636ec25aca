// The remote editor's routes outside tRPC: where a person opens a device's editor (a page of the
// platform's, with their session; they go on to the device's own editor host with a one-time
// code), and where the
// device's Node-RED checks the token an admin request carries (the agent's settings.js asks with
// `x-access-token` before it lets the request in, and keeps the answer 30 s).
import { Role } from "@flowplane/contract";
import { type Db, findDeviceEditor, findTeamForUser, unlessMalformedId } from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError, notFound, unauthorized } from "../../core/errors";
import { type RouteDoc, routeUrl } from "../../core/route-docs";
import { type PageDeps, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { AGENT_TAG } from "../live-schemas";
import { signInPath } from "./gate";
import type { DeviceEditor } from "./service";

const params = z.object({ deviceId: z.string().describe("The device's id") });

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

export const DEVICE_EDITOR_DOCS: RouteDoc[] = [TOKEN];

/** GET …/editor/token, for the device's Node-RED (no other credential). */
export async function editorTokenRoute(
  app: FastifyInstance,
  { db, editor }: { db: Db; editor: DeviceEditor },
) {
  app.get<{ Params: { deviceId: string } }>(routeUrl(TOKEN), async (request, reply) => {
    const token = request.headers["x-access-token"];
    const device = await unlessMalformedId(findDeviceEditor(db, request.params.deviceId));
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

/** Where a person opens a device's editor: a page of the platform's (their session). */
export const openEditorPath = (deviceId: string) => `/devices/${deviceId}/editor`;

/**
 * GET /devices/{deviceId}/editor: a page route, so that a browser without a session goes to the
 * sign-in page first and comes back. A member of the device's team (viewers read only) is sent on
 * (303) to the device's own editor host with a one-time code, which that host exchanges for a
 * session of its own; anyone else finds no device (404).
 */
export function openEditorPage(editor: DeviceEditor) {
  return (app: FastifyInstance, deps: PageDeps) => {
    app.get<{ Params: { deviceId: string } }>(
      "/devices/:deviceId/editor",
      {
        ...pageRoute,
        preHandler: async (request, reply) =>
          signedIn({ page: openEditorPath(request.params.deviceId) })(request, reply),
      },
      async (request, reply) => {
        const { db } = deps.context(request);
        const auth = request.auth!;
        const device = await unlessMalformedId(findDeviceEditor(db, request.params.deviceId));
        const role = device && (await findTeamForUser(db, device.team_id, auth.userId))?.role;
        if (!device || role === undefined || role < Role.viewer) throw notFound();
        if (device.mode !== "developer" || !device.editor_token_digest) {
          throw new ApiError(
            503,
            "editor_disabled",
            "The device's editor is not enabled: turn on developer mode, then the editor",
          );
        }
        const code = editor.sessions.issueCode(auth.userId, device.id);
        const target = new URL(signInPath, editor.hosts.editorUrl(device.id));
        target.searchParams.set("code", code);
        return reply.redirect(target.toString(), 303);
      },
    );
  };
}
