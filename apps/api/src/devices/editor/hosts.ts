// Where a browser opens a device's editor: a host of the device's own under the editors' domain,
// `0-device-<hex of its id>.<EDITOR_DOMAIN>` (by default `….localhost` on the platform's port),
// never the platform's host (browsers scope cookies by host: instances/editor-hosts.ts says why).
// The label starts with a digit, which no instance's name may (INSTANCE_NAME starts with a
// letter), so no instance can ever be given a device's host. The id is written in hex because ids
// are mixed-case and host names are not.
import { editorHosts } from "../../instances/index";

const PREFIX = "0-device-";
/** A host label is 63 characters at most: the hex of an id of up to 27 characters. */
const HEX = /^(?:[0-9a-f]{2}){1,27}$/;
const ID = /^[A-Za-z0-9_-]+$/;

export interface DeviceEditorHosts {
  /** A device's editor, e.g. `http://0-device-<id>.localhost:3000`. */
  editorUrl(deviceId: string): string;
  /** The device id a request's Host names, or undefined when it is not a device editor's host. */
  deviceOf(host: string | undefined): string | undefined;
}

export function deviceEditorHosts(baseUrl: string, domain?: string): DeviceEditorHosts {
  const hosts = editorHosts(baseUrl, domain);
  const suffix = `.${hosts.domain}`;
  return {
    editorUrl: (deviceId) => hosts.editorUrl(`${PREFIX}${Buffer.from(deviceId).toString("hex")}`),
    deviceOf(host) {
      if (host === undefined) return undefined;
      const name = host.toLowerCase().replace(/:\d*$/, "");
      if (!name.startsWith(PREFIX) || !name.endsWith(suffix)) return undefined;
      const hex = name.slice(PREFIX.length, -suffix.length);
      if (!HEX.test(hex)) return undefined;
      const id = Buffer.from(hex, "hex").toString();
      return ID.test(id) ? id : undefined;
    },
  };
}
