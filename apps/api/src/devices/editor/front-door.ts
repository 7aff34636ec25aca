// What reaches the platform before Fastify's router does, for devices' remote editors
// (plugins/server.ts): the agent's tunnel, a WebSocket upgrade of
// /api/v1/devices/{deviceId}/editor/comms/{token} on any host (the agent connects to the platform's
// URL), and everything on a device's editor host (hosts.ts), which goes through that tunnel to the
// device's Node-RED once the person is signed in to it (sessions.ts).
import type { FastifyBaseLogger } from "fastify";
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { AppOptions, FrontDoor } from "../../plugins/area";
import { editorGate, type SignedIn, signInPath } from "./gate";
import { screen } from "./screen";
import { deviceEditorOf } from "./service";
import { DEVICE_EDITOR_COOKIE } from "./sessions";
import type { TunnelResponse } from "./tunnels";

const COMMS =
  /^\/api\/v1\/devices\/([A-Za-z0-9_-]{1,64})\/editor\/comms\/([^/?#]{1,256})\/?(?:\?|$)/;

/** The largest request body the editor sends through the tunnel (a deploy of large flows). */
const BODY_LIMIT = 16 * 1024 * 1024;

/** How often the people of the open editor sockets are judged again (as instance editors are). */
const RECHECK_MS = 5_000;

/** Headers never carried through the tunnel: the browser's credentials, and the hop's own. */
const DROPPED_REQUEST_HEADERS = [
  "cookie",
  "authorization",
  "x-access-token",
  "host",
  "connection",
  "keep-alive",
  "upgrade",
  "transfer-encoding",
  "content-length",
  "accept-encoding",
  "proxy-authorization",
];
/** The agent's HTTP client has decoded the body already; the length is this side's. */
const DROPPED_RESPONSE_HEADERS = [
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-encoding",
  "content-length",
];

export function devicesFrontDoor(options: AppOptions, log: () => FastifyBaseLogger): FrontDoor {
  const editor = deviceEditorOf(options);
  const gate = editorGate(options.db, editor);
  const sockets = new WebSocketServer({ noServer: true, maxPayload: BODY_LIMIT });
  const failed = (error: unknown) => log().error({ err: error }, "device editor: request failed");
  const originOf = (deviceId: string) => new URL(editor.hosts.editorUrl(deviceId)).origin;
  /** The people's open sockets: judged at the upgrade, then again every few seconds. */
  const open = new Map<WebSocket, SignedIn & { deviceId: string }>();
  const recheck = setInterval(() => {
    void Promise.all(
      [...open].map(async ([ws, { deviceId, userId, session }]) => {
        // A viewer may keep the comms socket (it only reads): judged as a GET.
        const still =
          editor.sessions.userOf(session, deviceId, false) === userId &&
          (await gate.standing(deviceId, userId, "GET")).status === 200;
        if (!still) ws.close(1008, "Signed out");
      }),
    ).catch(failed);
  }, RECHECK_MS);
  recheck.unref();

  async function tunnel(
    deviceId: string,
    token: string,
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ) {
    const header = request.headers["x-access-token"];
    const verdict = await gate.tunnel(
      deviceId,
      token,
      typeof header === "string" ? header : undefined,
    );
    sockets.handleUpgrade(request, socket, head, (ws) => {
      // FlowFuse's codes: 4004 tells the agent there is no tunnel to open (it stops retrying).
      if (verdict === "none") ws.close(4004, "No tunnel");
      else if (verdict === "wrong") ws.close(4001, "Invalid token");
      else editor.tunnels.attach(deviceId, ws);
    });
  }

  async function editorSocket(
    deviceId: string,
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ) {
    const refusal = screen(request, originOf(deviceId), true);
    if (refusal) return refuseUpgrade(socket, refusal.status);
    const person = gate.signedIn(deviceId, request);
    const verdict = await gate.standing(deviceId, person?.userId, "GET");
    if (!person || verdict.status !== 200) return refuseUpgrade(socket, verdict.status);
    if (!editor.tunnels.isConnected(deviceId)) return refuseUpgrade(socket, 503);
    sockets.handleUpgrade(request, socket, head, (ws) => {
      if (!editor.tunnels.carry(deviceId, request.url ?? "/", ws)) {
        return ws.close(1011, "No tunnel");
      }
      open.set(ws, { deviceId, ...person });
      ws.on("close", () => open.delete(ws));
    });
  }

  async function serve(deviceId: string, request: IncomingMessage, response: ServerResponse) {
    const refusal = screen(request, originOf(deviceId), false);
    if (refusal) return send(response, plain(refusal.status, refusal.message));
    const url = new URL(request.url ?? "/", "http://device.invalid");
    if (url.pathname === signInPath) return signIn(deviceId, url, response);
    const person = gate.signedIn(deviceId, request);
    const verdict = await gate.standing(deviceId, person?.userId, request.method ?? "GET");
    if (verdict.status === 401 && request.method === "GET") {
      // Signed in on the platform first, which sends the person back with a code.
      return send(response, redirect(editor.openUrl(deviceId)));
    }
    if (verdict.status !== 200) return send(response, plain(verdict.status, verdict.message));
    const headers = { ...request.headers };
    for (const name of DROPPED_REQUEST_HEADERS) delete headers[name];
    const body = await bodyOf(request);
    if (body === undefined) return send(response, plain(413, "The request is too large."));
    const answer = await editor.tunnels.request(deviceId, {
      method: request.method ?? "GET",
      url: request.url ?? "/",
      headers,
      // A string: the agent hands the body to its HTTP client as it comes (lib/editor/tunnel.js),
      // which takes no Buffer-JSON, so a binary body cannot pass the tunnel unchanged.
      ...(body.length > 0 && { body: body.toString() }),
    });
    send(response, answer);
  }

  /** The code from the platform exchanged for the device-editor session's cookie (this host's). */
  function signIn(deviceId: string, url: URL, response: ServerResponse) {
    const session = editor.sessions.exchange(url.searchParams.get("code") ?? "", deviceId);
    if (!session) {
      return send(
        response,
        plain(401, "This sign-in link has expired: open the editor from the platform again."),
      );
    }
    const secure = options.baseUrl.startsWith("https:") ? "; Secure" : "";
    // Node-RED's editor takes `access_token` from its URL into its own storage, and from then on
    // sends it with every request (`{"auth": …}` on its comms socket too). Its value is no
    // credential: the proxy drops it, and the agent puts the tunnel's token in its place. The
    // person's credential is this host's HttpOnly cookie, which no script of the editor can read.
    const answer = redirect("/?access_token=device-editor");
    answer.headers["set-cookie"] =
      `${DEVICE_EDITOR_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax${secure}`;
    send(response, answer);
  }

  return {
    web(request, response) {
      const deviceId = editor.hosts.deviceOf(request.headers.host);
      if (deviceId === undefined) return false;
      serve(deviceId, request, response).catch((error: unknown) => {
        failed(error);
        if (!response.headersSent) send(response, plain(500, "Something went wrong."));
        else response.destroy();
      });
      return true;
    },
    upgrade(request, socket, head) {
      const deviceId = editor.hosts.deviceOf(request.headers.host);
      const comms = deviceId === undefined ? COMMS.exec(request.url ?? "") : null;
      if (deviceId === undefined && !comms) return false;
      socket.on("error", () => {});
      const token = comms ? tokenOf(comms[2]!) : "";
      if (token === undefined) {
        // A malformed escape (`%ZZ`): no token at all.
        socket.destroy();
        return true;
      }
      const opened =
        deviceId !== undefined
          ? editorSocket(deviceId, request, socket, head)
          : tunnel(comms![1]!, token, request, socket, head);
      opened.catch((error: unknown) => {
        failed(error);
        socket.destroy();
      });
      return true;
    },
    async close() {
      clearInterval(recheck);
      editor.sessions.close();
      editor.tunnels.closeAll();
      sockets.close();
    },
  };
}

function plain(status: number, message: string): TunnelResponse {
  return {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    body: Buffer.from(`${message}\n`),
  };
}

function redirect(location: string): TunnelResponse {
  return { status: 303, headers: { location, "cache-control": "no-store" }, body: Buffer.alloc(0) };
}

function send(response: ServerResponse, answer: TunnelResponse): void {
  const headers = { ...answer.headers };
  for (const name of DROPPED_RESPONSE_HEADERS) delete headers[name];
  // Node-RED answers under the agent's /device-editor prefix, which this host does not show.
  const location = headers.location;
  if (typeof location === "string" && location.startsWith("/device-editor")) {
    headers.location = location.slice("/device-editor".length) || "/";
  }
  headers["content-length"] = String(answer.body.length);
  response.writeHead(answer.status, headers as Record<string, string | string[]>);
  response.end(answer.body);
}

/** The tunnel token of the agent's URL, undefined when its escapes are malformed. */
function tokenOf(escaped: string): string | undefined {
  try {
    return decodeURIComponent(escaped);
  } catch {
    return undefined;
  }
}

function refuseUpgrade(socket: Duplex, status: number): void {
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
}

/** The request's body, or undefined past the limit. */
async function bodyOf(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
