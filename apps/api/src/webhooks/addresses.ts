// Where a webhook may point (docs/webhooks.md, "Where a hook may point"). A webhook is a
// server-side request forgery waiting to happen: its URL is checked at creation and again at each
// delivery, when its name is resolved and every address it resolves to must be a public unicast
// one — not loopback, link-local, private, unique-local, unspecified, multicast, shared (CGNAT) or
// any other reserved range — unless the operator allows the host (`WEBHOOK_ALLOWED_HOSTS`: names
// and addresses). The delivery then connects to the very address that was checked.
import { lookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { ApiError } from "../core/errors";

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** Why a URL may not be called: its scheme, a name that does not resolve, or a refused address. */
export class RefusedUrl extends Error {}

/** A URL's host as the allowance list names it: lowercased, an IPv6 address without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
}

/** Only ipaddr.js's `unicast` range is public: every other range it names is refused. */
function isPublic(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it is.
  const parsed = ipaddr.process(address);
  // An IPv4-compatible one (::/96, deprecated: `::7f00:1`) is unicast to ipaddr.js: refused.
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) {
    return false;
  }
  return parsed.range() === "unicast";
}

function isAllowed(allowed: readonly string[], host: string): boolean {
  if (allowed.includes(host)) return true;
  if (!ipaddr.isValid(host)) return false;
  const normal = ipaddr.process(host).toString();
  return allowed.some(
    (entry) => ipaddr.isValid(entry) && ipaddr.process(entry).toString() === normal,
  );
}

/**
 * The addresses a URL's host resolves to, each checked; throws RefusedUrl when the scheme is not
 * http(s), the name does not resolve, or any address is refused.
 */
export async function checkedAddresses(
  url: URL,
  allowed: readonly string[],
): Promise<CheckedAddress[]> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RefusedUrl("only http and https URLs are called");
  }
  const host = hostOf(url);
  let found: CheckedAddress[];
  if (ipaddr.isValid(host)) {
    found = [{ address: host, family: host.includes(":") ? 6 : 4 }];
  } else {
    try {
      const answers = await lookup(host, { all: true, verbatim: true });
      found = answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    } catch {
      throw new RefusedUrl(`the host ${host} does not resolve`);
    }
    if (found.length === 0) throw new RefusedUrl(`the host ${host} does not resolve`);
  }
  if (isAllowed(allowed, host)) return found;
  for (const { address } of found) {
    if (!isPublic(address) && !isAllowed(allowed, address)) {
      throw new RefusedUrl(
        // The address it resolved to is not said: an owner must not learn the internal names.
        `${host} is not a public address, or resolves to one that is not (WEBHOOK_ALLOWED_HOSTS allows a host)`,
      );
    }
  }
  return found;
}

/** The check at creation and on a change of URL: a refused URL is a 400. */
export async function assertUrlAllowed(url: string, allowed: readonly string[]): Promise<void> {
  try {
    await checkedAddresses(new URL(url), allowed);
  } catch (error) {
    if (error instanceof RefusedUrl) {
      throw new ApiError(400, "webhook_url_refused", `The URL is refused: ${error.message}`);
    }
    throw error;
  }
}

/** A `lookup` for http.request that answers only the addresses already checked (no rebinding). */
export function lookupOf(addresses: CheckedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as LookupFunction;
}
