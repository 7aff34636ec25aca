// One attempt at a delivery: the envelope POSTed as JSON, signed as Stripe signs
// (`Flowplane-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`), to the address
// checked just before (addresses.ts), on a connection of its own (no pooled socket outlives a
// check), without following redirects, bounded by a timeout.
import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { DeliveryAttempt } from "@flowplane/db";
import { checkedAddresses, lookupOf, RefusedUrl } from "./addresses";

export interface Outgoing {
  url: string;
  secret: string;
  deliveryId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

/** The signature header's value for a body at a time (docs/webhooks.md shows how to verify it). */
export function signature(secret: string, body: string, at: Date = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

/** What is kept of a receiver's answer: its status; the body is read and dropped. */
const MAX_ERROR = 500;

/** Sends once; never throws. `signal` aborts it (the platform is closing). */
export async function send(
  out: Outgoing,
  options: { allowedHosts: readonly string[]; timeoutMs: number; signal: AbortSignal },
): Promise<DeliveryAttempt> {
  const started = Date.now();
  const at = new Date(started).toISOString();
  const done = (responseCode: number | null, error: string | null): DeliveryAttempt => ({
    at,
    responseCode,
    latencyMs: Date.now() - started,
    error: error && error.slice(0, MAX_ERROR),
  });
  let url: URL;
  let addresses;
  try {
    url = new URL(out.url);
    addresses = await checkedAddresses(url, options.allowedHosts);
  } catch (error) {
    return done(null, error instanceof RefusedUrl ? `refused: ${error.message}` : String(error));
  }
  const body = JSON.stringify(out.payload);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(url, {
      method: "POST",
      agent: false,
      lookup: lookupOf(addresses),
      signal: options.signal,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "user-agent": "Flowplane-Webhooks",
        "flowplane-event": out.eventType,
        "flowplane-delivery": out.deliveryId,
        "flowplane-signature": signature(out.secret, body),
      },
    });
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const finish = (attempt: DeliveryAttempt) => {
      clearTimeout(timer);
      resolve(attempt);
    };
    req.on("response", (response) => {
      const code = response.statusCode ?? 0;
      response.resume();
      response.on("end", () =>
        finish(done(code, code >= 200 && code < 300 ? null : `answered ${code}`)),
      );
      response.on("error", (error) => finish(done(code, error.message)));
    });
    req.on("error", (error) => finish(done(null, error.message)));
    req.end(body);
  });
}
