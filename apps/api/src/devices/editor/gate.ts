// Who may pass into a device's editor, decided at every request: the agent's tunnel by its token
// (the digest of the device's current editor token), a person by their device-editor session and
// their role in the device's team of the moment — members and owners use the editor, viewers only
// read it (GET and HEAD, and its comms socket), anyone else finds no device there (404).
import { Role } from "@flowplane/contract";
import { type Db, findDeviceEditor, findTeamForUser } from "@flowplane/db";
import type { IncomingMessage } from "node:http";
import type { DeviceEditor } from "./service";
import { DEVICE_EDITOR_COOKIE } from "./sessions";

/** Where the device's editor host takes the platform's one-time code. */
export const signInPath = "/_flowplane/sign-in";

const READS = new Set(["GET", "HEAD"]);

export interface Verdict {
  status: 200 | 401 | 403 | 404 | 503;
  message: string;
}

export interface Gate {
  /** "none": the device has no editor token (or no such device); "wrong": not its token. */
  tunnel(
    deviceId: string,
    token: string,
    header: string | undefined,
  ): Promise<"ok" | "none" | "wrong">;
  person(deviceId: string, request: IncomingMessage, method: string): Promise<Verdict>;
}

/** The value of one cookie of the request's Cookie header. */
export function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

export function editorGate(db: Db, editor: DeviceEditor): Gate {
  return {
    async tunnel(deviceId, token, header) {
      const device = await findDeviceEditor(db, deviceId);
      if (!device?.editor_token_digest) return "none";
      if (header !== undefined && header !== token) return "wrong";
      return editor.digest(token) === device.editor_token_digest ? "ok" : "wrong";
    },
    async person(deviceId, request, method) {
      const userId = editor.sessions.userOf(cookieOf(request, DEVICE_EDITOR_COOKIE), deviceId);
      if (userId === undefined) {
        return { status: 401, message: "Open this device's editor from the platform." };
      }
      const device = await findDeviceEditor(db, deviceId);
      const role = device && (await findTeamForUser(db, device.team_id, userId))?.role;
      if (!device || role === undefined || role < Role.viewer) {
        return { status: 404, message: "Not Found" };
      }
      if (role < Role.member && !READS.has(method)) {
        return { status: 403, message: "Viewers may look at the editor, not change the device." };
      }
      if (device.mode !== "developer" || !device.editor_token_digest) {
        return {
          status: 503,
          message: "The device's editor is not enabled (developer mode and its editor first).",
        };
      }
      if (!editor.tunnels.isConnected(deviceId)) {
        return { status: 503, message: "The device's editor tunnel is not connected." };
      }
      return { status: 200, message: "" };
    },
  };
}
