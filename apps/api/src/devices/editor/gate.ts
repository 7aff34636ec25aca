// Who may pass into a device's editor, decided at every request: the agent's tunnel by its token
// (the digest of the device's current editor token), a person by their device-editor session and
// their role in the device's team of the moment — members and owners use the editor, viewers only
// read it (GET and HEAD, and its comms socket), anyone else finds no device there (404). As in an
// instance's editor, a suspended person, or one whose password has expired, is signed out.
import { Role } from "@flowplane/contract";
import { type Db, findDeviceEditor, findTeamForUser, findUser } from "@flowplane/db";
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

export interface SignedIn {
  userId: string;
  session: string;
}

export interface Gate {
  /** "none": the device has no editor token (or no such device); "wrong": not its token. */
  tunnel(
    deviceId: string,
    token: string,
    header: string | undefined,
  ): Promise<"ok" | "none" | "wrong">;
  /** The person a request's device-editor cookie signs in, and that cookie (undefined: none). */
  signedIn(deviceId: string, request: IncomingMessage): SignedIn | undefined;
  /** Whether the person may make a request of `method` in the device's editor now. */
  standing(deviceId: string, userId: string | undefined, method: string): Promise<Verdict>;
}

/**
 * Every value of one cookie of the request's Cookie header: a page of another site under the
 * editors' domain may set one of the same name for the whole domain, sent along with the host's.
 */
export function cookiesOf(request: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) values.push(value.join("="));
  }
  return values;
}

export function editorGate(db: Db, editor: DeviceEditor): Gate {
  return {
    async tunnel(deviceId, token, header) {
      const device = await findDeviceEditor(db, deviceId);
      if (!device?.editor_token_digest) return "none";
      if (header !== undefined && header !== token) return "wrong";
      return editor.digest(token) === device.editor_token_digest ? "ok" : "wrong";
    },
    signedIn(deviceId, request) {
      for (const session of cookiesOf(request, DEVICE_EDITOR_COOKIE)) {
        const userId = editor.sessions.userOf(session, deviceId);
        if (userId !== undefined) return { userId, session };
      }
      return undefined;
    },
    async standing(deviceId, userId, method) {
      const user = userId === undefined ? undefined : await findUser(db, userId);
      if (userId === undefined || !user || user.suspended || user.password_expired) {
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
