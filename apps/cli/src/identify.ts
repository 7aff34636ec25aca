// Before a credential (a token, a password) goes to a URL, the CLI asks what answers there: the
// platform's open liveness route (GET /healthz) names it (`"platform": "flowplane"`), and nothing
// else there does. Whatever else listens at that address (another service on port 3000, a typo's
// host) is refused with a clear message, and never sees the credential: this request carries none.
import { TIMEOUT_MS, unreachable } from "./client";
import { CliError } from "./errors";

/** `setting`: where the person gives the platform's URL instead. */
export async function checkFlowplane(url: string, setting = "--url"): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${url}/healthz`, {
      headers: { accept: "application/json" },
      // Where /healthz sends us is not what we asked about.
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw unreachable(url, error);
  }
  const body: unknown = await response.json().catch(() => undefined);
  const platform =
    typeof body === "object" && body !== null && "platform" in body ? body.platform : undefined;
  if (response.status !== 200 || platform !== "flowplane") {
    throw new CliError(
      `${url} is not a Flowplane server (GET ${url}/healthz answered HTTP ${response.status}` +
        `${platform === undefined ? " without naming a platform" : `, naming ${JSON.stringify(platform)}`})`,
      "not_flowplane",
      [
        `nothing was sent to it: give the platform's URL with ${setting} (its log says it, and ` +
          "the file base-url in its data directory holds it)",
      ],
    );
  }
}
