// What a device's remote editor is made of in one server: the agents' tunnels, the people's
// device-editor sessions, the editors' hosts. The front door (made before the server) and the
// area's start (made with it) are given the same options object, and find the same service by it.
import { randomBase62, tokenDigest } from "@flowplane/auth";
import type { AppOptions } from "../../plugins/area";
import { type DeviceEditorHosts, deviceEditorHosts } from "./hosts";
import { DeviceEditorSessions } from "./sessions";
import { EditorTunnels } from "./tunnels";

export interface DeviceEditor {
  tunnels: EditorTunnels;
  sessions: DeviceEditorSessions;
  hosts: DeviceEditorHosts;
  /** Where a person opens the device's editor: the platform's route that signs them in. */
  openUrl(deviceId: string): string;
  /** The digest kept of a tunnel token. */
  digest(token: string): string;
  /** The device's editor ended (disabled, developer mode off, or the device deleted). */
  end(deviceId: string): void;
}

const services = new WeakMap<AppOptions, DeviceEditor>();

export function deviceEditorOf(options: AppOptions): DeviceEditor {
  let service = services.get(options);
  if (!service) {
    const secret = options.tokenSecret;
    const base = options.baseUrl.replace(/\/+$/, "");
    const tunnels = new EditorTunnels();
    const sessions = new DeviceEditorSessions(secret);
    service = {
      tunnels,
      sessions,
      hosts: deviceEditorHosts(options.baseUrl, options.editorDomain),
      openUrl: (deviceId) => `${base}/devices/${deviceId}/editor`,
      digest: (token) => tokenDigest(secret, `device-editor-tunnel:${token}`),
      // Closing the tunnel closes the people's sockets carried through it (tunnels.ts).
      end(deviceId) {
        tunnels.close(deviceId);
        sessions.endDevice(deviceId);
      },
    };
    services.set(options, service);
  }
  return service;
}

/** A new tunnel token: `ffde_<deviceId>_<random>`, the shape the agent requires. */
export function newTunnelToken(deviceId: string): string {
  return `ffde_${deviceId}_${randomBase62(32)}`;
}

declare module "../../core/trpc" {
  interface Context {
    /** Devices' remote editors (none without a broker: no tunnel is ever asked for). */
    deviceEditor?: DeviceEditor;
  }
}
