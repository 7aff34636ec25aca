// What a device editor's host refuses before anyone's session is looked at. The host is the same
// site as every hosted instance's (`<name>.<EDITOR_DOMAIN>`), which serve their teams' own pages,
// so a SameSite cookie does not stop another team's page from posting a form to the device's editor
// or opening its comms socket with a signed-in person's cookie: anything but a read (GET, HEAD)
// and every WebSocket must come from the editor's own page, by its Origin (and Sec-Fetch-Site
// where the browser sends it). Node-RED's editor sends its own origin with its requests.
// The path goes on to the agent, which puts it after `/device-editor`: no dot segment may climb
// out of it, and the only WebSocket there is to open is the editor's comms.
import type { IncomingMessage } from "node:http";

const READS = new Set(["GET", "HEAD"]);
/** A `.` or `..` segment, raw or percent-encoded, between slashes or backslashes (URL parsers). */
const DOT_SEGMENT = /(?:^|[/\\])(?:\.|%2e){1,2}(?:[/\\]|$)/i;
/** The editor's comms socket (Node-RED's admin root is the host's root). */
const COMMS_PATH = /^\/comms(?:\?|$)/;

export interface Refusal {
  status: 400 | 403;
  message: string;
}

/** Why the request may not go on (undefined: it may). `origin`: the editor host's own. */
export function screen(
  request: IncomingMessage,
  origin: string,
  upgrade: boolean,
): Refusal | undefined {
  const url = request.url ?? "";
  const path = url.split(/[?#]/, 1)[0]!;
  if (!url.startsWith("/") || DOT_SEGMENT.test(path)) {
    return { status: 400, message: "Bad Request" };
  }
  if (upgrade && !COMMS_PATH.test(url)) return { status: 400, message: "Bad Request" };
  if (!upgrade && READS.has(request.method ?? "GET")) return undefined;
  const site = request.headers["sec-fetch-site"];
  if (request.headers.origin !== origin || (site !== undefined && site !== "same-origin")) {
    return { status: 403, message: "Only the device's editor itself may do this." };
  }
  return undefined;
}
