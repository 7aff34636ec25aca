// The team broker's decisions, as pure functions: who an MQTT username is, where a team's topics
// live inside the broker, and whether a client's ACLs allow a publish or a subscription. The
// embedded broker (aedes hooks) and the external one (EMQX through /api/comms/v2) both call these
// and nothing else, so the two cannot disagree.

import { BROKER_USERNAME, MAX_TOPIC_LENGTH, topicFilterProblem } from "@flowplane/contract";

export { BROKER_USERNAME, MAX_TOPIC_LENGTH, topicFilterProblem };

export type BrokerAction = "subscribe" | "publish" | "both";

export interface BrokerAcl {
  action: BrokerAction;
  pattern: string;
}

/** Why a bare client username is refused, or undefined when it is fine. */
export function brokerUsernameProblem(username: string): string | undefined {
  if (BROKER_USERNAME.test(username)) return undefined;
  return "1 to 64 letters, digits, '_', '.' or '-' (no '@' or ':', which the broker reserves)";
}

/** Why a topic to publish to is refused, or undefined when it is valid. */
export function topicNameProblem(topic: string): string | undefined {
  if (topic.length === 0) return "A topic cannot be empty";
  if (topic.length > MAX_TOPIC_LENGTH) return `At most ${MAX_TOPIC_LENGTH} characters`;
  if (topic.includes("\u0000")) return "A topic cannot contain NUL";
  if (topic.includes("+") || topic.includes("#")) return "A topic cannot contain '+' or '#'";
  if (topic.startsWith("$")) return "Topics starting with '$' belong to the broker";
  return undefined;
}

/** Whether `topic` (a topic name, no wildcards) matches `filter`, per MQTT 3.1.1 §4.7. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split("/");
  const t = topic.split("/");
  for (let i = 0; i < f.length; i++) {
    const level = f[i]!;
    if (level === "#") return true;
    if (i >= t.length) return false;
    if (level !== "+" && level !== t[i]) return false;
  }
  return f.length === t.length;
}

/**
 * Whether every topic `inner` matches is also matched by `outer` (both filters): a subscription
 * is allowed only when it cannot receive anything its ACL pattern does not cover. Stricter than
 * FlowFuse's test (the filter matched as if it were a topic), which lets `sensors/#` through an
 * ACL of `sensors/+` and so delivers deeper topics the ACL never named.
 */
export function filterCovers(outer: string, inner: string): boolean {
  const o = outer.split("/");
  const n = inner.split("/");
  for (let i = 0; i < o.length; i++) {
    const level = o[i]!;
    if (level === "#") return true;
    if (i >= n.length) return false;
    const other = n[i]!;
    if (other === "#") return false;
    if (level === "+") continue;
    if (other === "+" || other !== level) return false;
  }
  return o.length === n.length;
}

/**
 * The ACL decision. `topic` is the bare (team-relative) topic: a topic name for a publish, the
 * subscription's filter for a subscribe. `both` covers both actions. Anything starting with `$`
 * is refused, whatever the ACLs say.
 */
export function aclAllows(
  acls: readonly BrokerAcl[],
  action: "subscribe" | "publish",
  topic: string,
): boolean {
  if (action === "publish" ? topicNameProblem(topic) : topicFilterProblem(topic)) return false;
  return acls.some(
    (acl) =>
      (acl.action === action || acl.action === "both") &&
      (action === "publish" ? topicMatches(acl.pattern, topic) : filterCovers(acl.pattern, topic)),
  );
}

/** Where a team's topics live inside the broker (FlowFuse's EMQX mountpoint). */
export function mountFor(teamId: string): string {
  return `ff/v1/${teamId}/c/`;
}

/** A team client's MQTT identity: `<username>@<teamId>`, as username and as client id. */
export interface BrokerIdentity {
  username: string;
  teamId: string;
}

/** The identity in an MQTT username, or undefined when it is not `<username>@<teamId>`. */
export function parseBrokerUsername(mqttUsername: string): BrokerIdentity | undefined {
  const parts = mqttUsername.split("@");
  if (parts.length !== 2) return undefined;
  const [username, teamId] = parts as [string, string];
  if (brokerUsernameProblem(username) || !/^[A-Za-z0-9_-]{1,64}$/.test(teamId)) return undefined;
  return { username, teamId };
}

export const brokerUsernameOf = (identity: BrokerIdentity): string =>
  `${identity.username}@${identity.teamId}`;

/** The longest password a broker client may have (FlowFuse's limit). */
export const MAX_BROKER_PASSWORD = 128;

/**
 * Whether a CONNECT may go on to the password check: the username names a team client and the
 * client id is the same string (one credential, one session). Returns the identity to look up.
 */
export function connectIdentity(
  mqttUsername: string | undefined,
  clientId: string,
  password: string | undefined,
): BrokerIdentity | undefined {
  if (mqttUsername === undefined || password === undefined) return undefined;
  if (mqttUsername !== clientId) return undefined;
  if (password.length === 0 || password.length > MAX_BROKER_PASSWORD) return undefined;
  return parseBrokerUsername(mqttUsername);
}

/** A device's MQTT identity: the agent's `brokerUsername`, `device:<teamId>:<deviceId>`. */
export interface DeviceBrokerIdentity {
  teamId: string;
  deviceId: string;
}

const DEVICE_USERNAME = /^device:([A-Za-z0-9_-]{1,64}):([A-Za-z0-9_-]{1,64})$/;

export const deviceBrokerUsername = (teamId: string, deviceId: string): string =>
  `device:${teamId}:${deviceId}`;

/** The device a username names, or undefined when it is not a device's. */
export function parseDeviceUsername(mqttUsername: string): DeviceBrokerIdentity | undefined {
  const match = DEVICE_USERNAME.exec(mqttUsername);
  return match ? { teamId: match[1]!, deviceId: match[2]! } : undefined;
}

/** A device's own topic: `ff/v1/<teamId>/d/<deviceId>/<leaf>` (FlowFuse's). */
export const deviceTopic = (identity: DeviceBrokerIdentity, leaf: string): string =>
  `ff/v1/${identity.teamId}/d/${identity.deviceId}/${leaf}`;

/** What the agent publishes: its status, its log, its resources and its replies to commands. */
const DEVICE_PUBLISHES = new Set(["status", "logs", "resources", "response"]);

/**
 * What a device may do on the broker, on its own topics only: publish its status, log, resources
 * and command replies (`response`, or `response/<one level>`, the reply topic a command names),
 * and subscribe to its command topic and to its instance's or application's broadcast command
 * topic (exact topics, no wildcard). Another device's, another team's and the team clients'
 * topics are refused.
 */
export function deviceMayUse(
  identity: DeviceBrokerIdentity,
  owner: { applicationId: string | null; projectId: string | null },
  action: "subscribe" | "publish",
  topic: string,
): boolean {
  if (topicNameProblem(topic)) return false;
  const own = `ff/v1/${identity.teamId}/d/${identity.deviceId}/`;
  if (action === "publish") {
    if (!topic.startsWith(own)) return false;
    const leaf = topic.slice(own.length).split("/");
    return (
      DEVICE_PUBLISHES.has(leaf[0]!) &&
      (leaf.length === 1 || (leaf.length === 2 && leaf[0] === "response" && leaf[1] !== ""))
    );
  }
  const team = `ff/v1/${identity.teamId}/`;
  return (
    topic === `${own}command` ||
    (owner.projectId !== null && topic === `${team}p/${owner.projectId}/command`) ||
    (owner.applicationId !== null && topic === `${team}a/${owner.applicationId}/command`)
  );
}
