// A webhook receiver on 127.0.0.1 for the tests: it keeps every delivery it gets (headers and the
// raw body) and answers as the test says (a status, or never: a receiver that hangs).
import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** What the next request is answered: a status, or "hang" (never answered). */
  answer: (request: number) => number | "hang";
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    answer: () => 200,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const index = receiver.received.length;
      receiver.received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      });
      const answer = receiver.answer(index);
      if (answer === "hang") {
        hanging.push(response);
        return;
      }
      response.writeHead(answer).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/**
 * The verification snippet of docs/webhooks.md, as the doc has it (the code block after the
 * `verify-snippet` marker): a test that it verifies is a test of the doc.
 */
export async function documentedVerify(): Promise<
  (rawBody: string, header: string, secret: string, toleranceSeconds?: number) => boolean
> {
  const doc = await readFile(
    fileURLToPath(new URL("../../../../docs/webhooks.md", import.meta.url)),
    "utf8",
  );
  const block = /<!-- verify-snippet -->\s*```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error("docs/webhooks.md has no verify snippet");
  const body = block
    .replace(/^import \{ createHmac, timingSafeEqual \} from "node:crypto";$/m, "")
    .replace(/^export function/m, "function");
  const crypto = await import("node:crypto");
  return new Function(
    "createHmac",
    "timingSafeEqual",
    "Buffer",
    `${body}\nreturn verifyFlowplaneSignature;`,
  )(crypto.createHmac, crypto.timingSafeEqual, Buffer);
}
