// Where a browser opens an instance's editor: a host name of the instance's own
// (`<name>.<EDITOR_DOMAIN>`, by default `<name>.localhost` on the platform's port), served by the
// platform's proxy. Never the platform's own host: browsers scope cookies by host, not by port, so
// anything a tenant serves on the platform's host would receive the platform's session cookie.
// And one host per instance: a browser's storage is per origin, so no instance's pages can read
// another's editor session.
import { INSTANCE_NAME } from "@flowplane/contract";

export interface EditorHosts {
  /** The domain under which each instance has its host, e.g. `localhost` or `editors.example.com`. */
  readonly domain: string;
  /** An instance's editor, e.g. `http://line-one.localhost:3000`. */
  editorUrl(name: string): string;
  /** The instance name a request's Host names, or undefined when it is not an editor's host. */
  instanceOf(host: string | undefined): string | undefined;
  /** Every editor's host as a Content-Security-Policy source, e.g. `http://*.localhost:3000`. */
  readonly cspSource: string;
}

/**
 * Editors' hosts for a platform at `baseUrl`: the same scheme and port (the platform's proxy
 * answers them), under `domain` (default: `localhost`, which browsers resolve to loopback).
 */
export function editorHosts(baseUrl: string, domain = "localhost"): EditorHosts {
  const base = new URL(baseUrl);
  const suffix = `.${domain.toLowerCase().replace(/^\.+|\.+$/g, "")}`;
  const port = base.port ? `:${base.port}` : "";
  return {
    domain: suffix.slice(1),
    editorUrl: (name) => `${base.protocol}//${name.toLowerCase()}${suffix}${port}`,
    cspSource: `${base.protocol}//*${suffix}${port}`,
    instanceOf(host) {
      if (host === undefined) return undefined;
      // The Host header's name, without its port (an IPv6 literal is never an editor's host).
      const name = host.toLowerCase().replace(/:\d*$/, "");
      if (!name.endsWith(suffix)) return undefined;
      const label = name.slice(0, -suffix.length);
      return INSTANCE_NAME.test(label) && label.length <= 63 ? label : undefined;
    },
  };
}

declare module "../core/trpc" {
  interface Context {
    /** Where browsers open instances' editors. */
    editorHosts: EditorHosts;
  }
}
