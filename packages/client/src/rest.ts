// The routes for people the router has no procedure for, as typed functions. Only one: whether a
// device's registration waits for a person (GET /api/v1/devices/_/register/status/{sessionToken},
// what the registration page checks). The other routes outside tRPC are the device agent's (its
// check-in, state, snapshot and settings, with the device's own token; the registration's start
// and poll, with none) and are not for this client.
import { envelopeError, FlowplaneClientError } from "./errors";
import { type FlowplaneClientOptions, trimmed } from "./client";

/**
 * Whether the registration with this page token waits for a person: true (202) while it does,
 * false (404) when it is unknown, completed or expired. Any other answer throws
 * FlowplaneClientError.
 */
export async function registrationWaits(
  options: Omit<FlowplaneClientOptions, "batch">,
  sessionToken: string,
): Promise<boolean> {
  const url = `${trimmed(options.url)}/api/v1/devices/_/register/status/${encodeURIComponent(sessionToken)}`;
  const response = await (options.fetch ?? globalThis.fetch)(url, {
    headers: { authorization: `Bearer ${options.token}` },
  });
  if (response.status === 202) return true;
  const body: unknown = await response.json().catch(() => undefined);
  const failure = envelopeError(body, response.status);
  if (response.status === 404 && failure?.code === "not_found") return false;
  throw (
    failure ??
    new FlowplaneClientError(`the server answered HTTP ${response.status} with no API error`, {
      code: "unexpected_error",
      status: response.status,
    })
  );
}
