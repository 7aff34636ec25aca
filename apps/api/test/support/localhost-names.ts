// Every test's fetch resolves `*.localhost` to loopback, as browsers and curl do (Node's resolver
// does not): instances' editors are served by the platform at `<name>.localhost:<port>`.
import { lookup, type LookupAddress, type LookupOptions } from "node:dns";
import { Agent, setGlobalDispatcher } from "undici";

type Callback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** dns.lookup, but `*.localhost` is loopback: for clients that take a `lookup` (ws, http). */
export function localhostLookup(
  hostname: string,
  options: LookupOptions,
  callback: Callback,
): void {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) {
    if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
    return;
  }
  lookup(hostname, options, callback as never);
}

setGlobalDispatcher(new Agent({ connect: { lookup: localhostLookup as never } }));
