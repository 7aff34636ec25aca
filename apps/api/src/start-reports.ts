// What a start says in the log besides its own steps: every audit entry as an activity line, a
// warning when the editors share the platform's site, and how hosted instances are kept apart.
import { onAuditWritten } from "@flowplane/db";
import type { InstanceIsolation, LocalDriver } from "@flowplane/runtime";
import type { Logger } from "pino";
import { type Config, type TrustProxy, trustFunction } from "./env";

/**
 * What people and devices do, a line each at `info` (creations, deploys, device registrations,
 * pipeline runs…): the audit log's entries as they are written, by event name, with what they
 * name (ids, never a value of a secret: entries hold none).
 */
export function logActivity(log: Logger): void {
  const activity = log.child({ component: "activity" });
  onAuditWritten((entry) => {
    activity.info(
      {
        entity: entry.entity.id ? `${entry.entity.type}:${entry.entity.id}` : entry.entity.type,
        ...(entry.teamId && { teamId: entry.teamId }),
        by: entry.actor === "system" ? "platform" : `user:${entry.actor.userId}`,
        ...(entry.actor !== "system" && entry.actor.tokenId && { tokenId: entry.actor.tokenId }),
      },
      entry.event,
    );
  });
}

/**
 * Editors on a host under the platform's own domain can set cookies for it (a tenant's page
 * tosses a cookie with `Domain=` the platform's): said at every start, as a misconfiguration.
 */
export function warnOnSharedSite(config: Config, log: Logger): void {
  const host = new URL(config.BASE_URL).hostname.toLowerCase();
  const domain = config.EDITOR_DOMAIN.toLowerCase();
  if (/^[\d.]+$|^\[/.test(host)) return; // An address: no cookie can name it as a domain.
  const site = (name: string) => name.split(".").slice(-2).join(".");
  if (domain === host || domain.endsWith(`.${host}`) || site(domain) === site(host)) {
    log.warn(
      { baseUrl: config.BASE_URL, editorDomain: config.EDITOR_DOMAIN },
      "instances' editors are on the platform's own site: a tenant's page could set cookies " +
        "the platform reads. Give EDITOR_DOMAIN a domain of its own (not under BASE_URL's)",
    );
  }
}

/**
 * Says in the log how hosted instances are kept apart, and plainly when they are not: what
 * `driver.isolation()` found, returned.
 */
export async function reportIsolation(
  driver: LocalDriver,
  log: Logger,
): Promise<InstanceIsolation> {
  const isolation = await driver.isolation();
  report(isolation, log);
  return isolation;
}

/**
 * TRUST_PROXY believing loopback (or any hop, a count) while hosted instances share the host's
 * network: a flow connects to the platform's port on 127.0.0.1 itself and its X-Forwarded-For is
 * believed, so it picks the client address the audit log keeps and the sign-in limits count.
 * Said at every start (docs/operations.md, "Behind a reverse proxy").
 */
export function warnOnTrustedLoopback(
  trustProxy: TrustProxy,
  isolation: InstanceIsolation | undefined,
  log: Logger,
): void {
  if (trustProxy === false || trustProxy === 0 || !isolation) return;
  if (isolation.mode === "sandbox" && isolation.network === "own") return;
  const trust = trustFunction(trustProxy);
  if (!["127.0.0.1", "::1", "::ffff:127.0.0.1"].some((address) => trust(address, 0))) return;
  log.warn(
    { trustProxy },
    typeof trustProxy === "number"
      ? "TRUST_PROXY is a hop count and hosted instances share the host's network: a flow that " +
          "connects to the platform's port directly chooses the client address it is taken for " +
          "(in the audit log, in the sign-in limits). Name the proxy's address instead, one " +
          "instances cannot connect from (docs/operations.md, Behind a reverse proxy)"
      : "TRUST_PROXY trusts loopback and hosted instances share the host's network: a flow that " +
          "connects to 127.0.0.1 chooses the client address it is taken for (in the audit log, " +
          "in the sign-in limits). Give instances network namespaces of their own (pasta), or " +
          "put the proxy at an address off this host (docs/operations.md, Behind a reverse proxy)",
  );
}

function report(isolation: InstanceIsolation, log: Logger): void {
  if (isolation.mode === "sandbox" && isolation.network === "host") {
    log.warn(
      { isolation },
      "hosted instances share the host's network (no network namespace of their own: " +
        `${isolation.reason}): their flows reach every service on the host's loopback. Install ` +
        "passt (pasta) and run the platform as root for a network namespace per instance",
    );
  }
  if (isolation.mode === "sandbox") {
    if (isolation.user === "per-instance") {
      log.info(
        { isolation },
        `hosted instances run in sandboxes (bubblewrap), each under a user id of its own${isolation.network === "own" ? " and in a network of its own" : ""}`,
      );
    } else if (isolation.reason) {
      log.warn(
        { isolation },
        `hosted instances run in sandboxes (bubblewrap) under the platform's user id: ${isolation.reason}`,
      );
    } else {
      log.info(
        { isolation },
        "hosted instances run in sandboxes (bubblewrap), under the platform's user id",
      );
    }
    return;
  }
  if (isolation.required) {
    log.error(
      { isolation },
      `INSTANCE_ISOLATION=required and no sandbox can be made here (${isolation.reason}): hosted instances will not start`,
    );
    return;
  }
  if (isolation.user === "platform" && process.getuid?.() === 0) {
    log.error(
      { isolation },
      `the platform runs as root and hosted instances cannot have user ids of their own (${isolation.reason ?? "INSTANCE_USER_IDS is off"}): they will not start, since they would run as root. Run the platform as an ordinary user, or install bubblewrap`,
    );
    return;
  }
  log.warn(
    { isolation },
    `hosted instances are NOT isolated (${isolation.reason}): their flows can read and change ` +
      "whatever this platform's user can, DATA_DIR included (the database, the tokens' key) and " +
      "every other instance. Fine for one person on their own machine; otherwise install " +
      "bubblewrap, or set INSTANCE_ISOLATION=required to refuse instances without a sandbox",
  );
}
