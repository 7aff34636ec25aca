// Following a device's Node-RED log live: GET /api/v1/devices/{deviceId}/logs/stream, Server-Sent
// Events read with fetch (a browser's EventSource cannot send a bearer token), one line per event.
import type { DeviceLogLine } from "@flowplane/contract";
import { type FlowplaneClientOptions, trimmed } from "./client";
import { refusalOf } from "./errors";

export type { DeviceLogLine };

export interface FollowOptions {
  /** Resume after this line's `id` (the server's `Last-Event-ID`). */
  after?: number;
  /** Stops the stream. */
  signal?: AbortSignal;
}

/**
 * The device's log lines as the server streams them, until the stream ends: the device's session
 * ended, the caller's access ended, the server closed, or `signal` aborted (which ends it quietly).
 * A refusal before the stream starts throws FlowplaneClientError with the API's code.
 */
export async function* followDeviceLog(
  options: Omit<FlowplaneClientOptions, "batch">,
  deviceId: string,
  follow: FollowOptions = {},
): AsyncGenerator<DeviceLogLine> {
  const url = `${trimmed(options.url)}/api/v1/devices/${encodeURIComponent(deviceId)}/logs/stream`;
  const response = await (options.fetch ?? globalThis.fetch)(url, {
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: "text/event-stream",
      ...(follow.after !== undefined && { "last-event-id": String(follow.after) }),
    },
    signal: follow.signal,
  });
  if (response.status !== 200 || !response.body) throw await refusalOf(response);
  const decoder = new TextDecoder();
  let text = "";
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      let split: number;
      while ((split = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, split);
        text = text.slice(split + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        // Comments (heartbeats) and the closing `end` event carry no line.
        if (block.includes("event:") || data === "") continue;
        yield JSON.parse(data) as DeviceLogLine;
      }
    }
  } catch (error) {
    if (follow.signal?.aborted) return;
    throw error;
  } finally {
    reader.cancel().catch(() => {});
  }
}
