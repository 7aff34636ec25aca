// The editor tunnels the device agents open to the platform (the agent's lib/editor/tunnel.js):
// one WebSocket per device, over which the platform sends the editor's HTTP requests
// `{id, method, url, headers, body}` and the agent answers `{id, status, headers, body}` (its body a
// string, or got's rawBody as Buffer-JSON `{type: "Buffer", data}`); a WebSocket of the editor is
// opened with `{id, ws: true, url}`, carried as `{id, ws: true, body}` both ways and ended with
// `{id, ws: true, closed: true}` by either side. The tunnels live in this process, as do the
// agents' sockets.
import type { WebSocket } from "ws";

/** An HTTP request for the device's Node-RED (its path under the agent's `/device-editor`). */
export interface TunnelRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
}

export interface TunnelResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** How long a request through the tunnel waits for its answer. */
const REQUEST_TIMEOUT_MS = 30_000;

interface Pending {
  resolve: (response: TunnelResponse) => void;
  timer: NodeJS.Timeout;
}

interface Frame {
  id?: number;
  ws?: boolean;
  closed?: boolean;
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/** A response's body as the agent sends it: a string, Buffer-JSON, or none. */
function bodyOf(body: unknown): Buffer {
  if (typeof body === "string") return Buffer.from(body);
  if (body && typeof body === "object" && Array.isArray((body as { data?: unknown }).data)) {
    return Buffer.from((body as { data: number[] }).data);
  }
  return Buffer.alloc(0);
}

class Tunnel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly sockets = new Map<number, WebSocket>();

  constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(data)) as Frame;
      } catch {
        return;
      }
      if (typeof frame.id !== "number") return;
      if (frame.ws) this.fromDeviceSocket(frame.id, frame);
      else this.answered(frame.id, frame);
    });
    socket.on("close", () => this.ended());
    socket.on("error", () => socket.terminate());
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  request(request: TunnelRequest): Promise<TunnelResponse> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(gatewayAnswer(504, "The device's editor did not answer in time."));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, timer });
      this.socket.send(JSON.stringify({ id, ...request }));
    });
  }

  /** Carries a WebSocket of the editor (the browser's) to the device's Node-RED at `url`. */
  carry(url: string, client: WebSocket): void {
    const id = this.nextId++;
    this.sockets.set(id, client);
    this.socket.send(JSON.stringify({ id, ws: true, url }));
    client.on("message", (data) => {
      if (this.open) this.socket.send(JSON.stringify({ id, ws: true, body: String(data) }));
    });
    client.on("close", () => {
      if (!this.sockets.delete(id)) return;
      if (this.open) this.socket.send(JSON.stringify({ id, ws: true, closed: true }));
    });
    client.on("error", () => client.terminate());
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
    this.ended();
  }

  private fromDeviceSocket(id: number, frame: Frame): void {
    const client = this.sockets.get(id);
    if (!client) return;
    if (frame.closed) {
      this.sockets.delete(id);
      client.close();
    } else if (typeof frame.body === "string") client.send(frame.body);
  }

  private answered(id: number, frame: Frame): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.resolve({
      status: typeof frame.status === "number" ? frame.status : 502,
      headers: frame.headers ?? {},
      body: bodyOf(frame.body),
    });
  }

  /** The agent's socket is gone: whatever waited on it ends now. */
  private ended(): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.resolve(gatewayAnswer(502, "The device's editor tunnel closed."));
      this.pending.delete(id);
    }
    for (const client of this.sockets.values()) client.close(1001, "Tunnel closed");
    this.sockets.clear();
  }
}

export function gatewayAnswer(status: number, message: string): TunnelResponse {
  return {
    status,
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: Buffer.from(`${message}\n`),
  };
}

/** The devices' open tunnels, by device id. */
export class EditorTunnels {
  private readonly tunnels = new Map<string, Tunnel>();

  /** The agent's socket for the device, which replaces any it had. */
  attach(deviceId: string, socket: WebSocket): void {
    this.tunnels.get(deviceId)?.close(1000, "Replaced");
    const tunnel = new Tunnel(socket);
    this.tunnels.set(deviceId, tunnel);
    socket.on("close", () => {
      if (this.tunnels.get(deviceId) === tunnel) this.tunnels.delete(deviceId);
    });
  }

  isConnected(deviceId: string): boolean {
    return this.tunnels.get(deviceId)?.open ?? false;
  }

  /**
   * Closes the device's tunnel: 4004 "No tunnel" (the default) tells the agent to stop
   * reconnecting, as FlowFuse's does when the editor is disabled.
   */
  close(deviceId: string, code = 4004, reason = "No tunnel"): void {
    const tunnel = this.tunnels.get(deviceId);
    if (!tunnel) return;
    this.tunnels.delete(deviceId);
    tunnel.close(code, reason);
  }

  closeAll(): void {
    for (const id of [...this.tunnels.keys()]) this.close(id, 1001, "Going away");
  }

  request(deviceId: string, request: TunnelRequest): Promise<TunnelResponse> {
    const tunnel = this.tunnels.get(deviceId);
    if (!tunnel?.open) {
      return Promise.resolve(gatewayAnswer(503, "The device's editor tunnel is not connected."));
    }
    return tunnel.request(request);
  }

  /** Carries the browser's WebSocket through the tunnel; false when there is none. */
  carry(deviceId: string, url: string, client: WebSocket): boolean {
    const tunnel = this.tunnels.get(deviceId);
    if (!tunnel?.open) return false;
    tunnel.carry(url, client);
    return true;
  }
}
