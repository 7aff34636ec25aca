// The broker's questions answered from the platform's database: may this CONNECT go ahead, and may
// this client publish or subscribe here. The embedded broker and the HTTP callbacks for an external
// one both ask this service, which asks @flowplane/auth's pure decisions; so the two front ends
// cannot disagree.
import {
  aclAllows,
  type BrokerAcl,
  type BrokerIdentity,
  connectIdentity,
  type DeviceBrokerIdentity,
  deviceBrokerUsername,
  deviceMayUse,
  mountFor,
  parseBrokerUsername,
  parseDeviceUsername,
  tokenDigest,
  verifyPassword,
} from "@flowplane/auth";
import { type Db, findBrokerCredential, findDeviceForBroker } from "@flowplane/db";
import { timingSafeEqual } from "node:crypto";
import type { PlatformTransport } from "./transport";
import { LRUCache } from "lru-cache";
import { RateLimiterMemory } from "rate-limiter-flexible";

/** A client allowed to connect. */
export interface BrokerSession extends BrokerIdentity {
  /** Where its topics live inside the broker: `ff/v1/<teamId>/c/` (a device's: none, ""). */
  mount: string;
  /** A device (the agent), on its own `ff/v1/<teamId>/d/<deviceId>/…` topics: not a team client. */
  device?: DeviceBrokerIdentity;
}

/** Who asks the broker: a team client, or a device (whose username is `device:<team>:<id>`). */
type Asker = BrokerIdentity & { device?: DeviceBrokerIdentity };

interface CachedDevice {
  owner: { applicationId: string | null; projectId: string | null };
  passwordDigest: string | null;
  loadedAt: number;
}

interface CachedClient {
  acls: BrokerAcl[];
  passwordHash: string;
  loadedAt: number;
}

export interface BrokerChange {
  teamId: string;
  username: string;
  /** The MQTT client id whose session ends (a team client's: `<username>@<teamId>`). */
  clientId?: string;
  /** The client is gone or its password changed: its live session must end. */
  disconnect: boolean;
}

const key = (identity: BrokerIdentity) => `${identity.teamId}/${identity.username}`;

/** At most `max` failures in a window of `windowMs`. */
export interface FailureLimit {
  max: number;
  windowMs: number;
}

export interface BrokerAccessOptions {
  /** How long a client's ACLs are trusted before they are read again (changes made through
   *  another server sharing the database arrive within it; changes made here at once). */
  refreshMs?: number;
  /** Failed CONNECTs per client username (default 5 in 30 s, as sign-in). */
  failuresPerClient?: FailureLimit;
  /** Failed CONNECTs per client address (default 30 in 30 s). */
  failuresPerAddress?: FailureLimit;
}

const limiter = (limit: FailureLimit) =>
  new RateLimiterMemory({ points: limit.max, duration: Math.ceil(limit.windowMs / 1000) });

export class BrokerAccess {
  /** ACLs of clients asked about recently; a change made here drops the entry at once. */
  private readonly clients: LRUCache<string, CachedClient>;
  /**
   * Passwords that matched recently, as HMACs keyed by the server secret, per stored hash: a
   * reconnect storm costs lookups, not a scrypt each. A new password (a new hash) misses.
   */
  private readonly verified = new LRUCache<string, string>({ max: 10_000, ttl: 10 * 60_000 });
  private readonly devices = new LRUCache<string, CachedDevice>({ max: 100_000 });
  private readonly listeners: ((change: BrokerChange) => void)[] = [];
  private readonly refreshMs: number;
  /**
   * Guessing limits: a client username or an address past its failures is refused without a
   * password check (which costs a scrypt: unchecked, a stream of wrong CONNECTs would be a cheap
   * way to burn the platform's CPU). Successful CONNECTs never count.
   */
  private readonly clientFailures: RateLimiterMemory;
  private readonly addressFailures: RateLimiterMemory;

  constructor(
    private readonly db: Db,
    private readonly secret: string,
    options: BrokerAccessOptions = {},
  ) {
    this.clients = new LRUCache({ max: 50_000 });
    this.refreshMs = options.refreshMs ?? 5_000;
    this.clientFailures = limiter(options.failuresPerClient ?? { max: 5, windowMs: 30_000 });
    this.addressFailures = limiter(options.failuresPerAddress ?? { max: 30, windowMs: 30_000 });
  }

  /**
   * The session a CONNECT opens, or undefined: refused (CONNACK 5). `address` is the client's
   * network address when the broker knows it (the embedded one does; EMQX's callback does not).
   */
  async authenticate(
    mqttUsername: string | undefined,
    clientId: string,
    password: string | undefined,
    address?: string,
  ): Promise<BrokerSession | undefined> {
    if (address !== undefined && (await this.blocked(this.addressFailures, address))) {
      return undefined;
    }
    const device = mqttUsername === clientId ? parseDeviceUsername(clientId) : undefined;
    if (device) return this.authenticateDevice(device, clientId, password, address);
    const identity = connectIdentity(mqttUsername, clientId, password);
    if (!identity || password === undefined) return this.failed(address);
    const cacheKey = key(identity);
    if (await this.blocked(this.clientFailures, cacheKey)) return undefined;
    const row = await findBrokerCredential(this.db, identity.teamId, identity.username);
    const proof = tokenDigest(this.secret, `${cacheKey}\u0000${password}`);
    if (row && this.verified.get(row.password_hash) === proof) {
      this.remember(identity, row.acls, row.password_hash);
    } else {
      // Unknown clients cost a scrypt too (verifyPassword's decoy): no timing oracle for names.
      if (!(await verifyPassword(password, row?.password_hash)) || !row) {
        return this.failed(address, cacheKey);
      }
      this.verified.set(row.password_hash, proof);
      this.remember(identity, row.acls, row.password_hash);
    }
    return { ...identity, mount: mountFor(identity.teamId) };
  }

  /** A device's CONNECT: its broker password, issued with its token, checked by digest. */
  private async authenticateDevice(
    device: DeviceBrokerIdentity,
    clientId: string,
    password: string | undefined,
    address?: string,
  ): Promise<BrokerSession | undefined> {
    if (await this.blocked(this.clientFailures, clientId)) return undefined;
    const row = await findDeviceForBroker(this.db, device.deviceId);
    if (
      !row ||
      row.team_id !== device.teamId ||
      !password ||
      !sameDigest(row.broker_password_digest, tokenDigest(this.secret, password))
    ) {
      return this.failed(address, clientId);
    }
    this.devices.set(clientId, {
      owner: { applicationId: row.application_id, projectId: row.project_id },
      passwordDigest: row.broker_password_digest,
      loadedAt: Date.now(),
    });
    return { username: clientId, teamId: device.teamId, mount: "", device };
  }

  private async blocked(limits: RateLimiterMemory, subject: string): Promise<boolean> {
    const used = await limits.get(subject);
    return used !== null && used.consumedPoints >= limits.points;
  }

  private async failed(address?: string, client?: string): Promise<undefined> {
    await Promise.all([
      address !== undefined && this.addressFailures.penalty(address),
      client !== undefined && this.clientFailures.penalty(client),
    ]);
    return undefined;
  }

  /**
   * Whether the client may publish to, or subscribe with, the bare `topic`. Synchronous while the
   * client's ACLs are fresh (the broker's hot path); otherwise read again. A client that has gone,
   * or whose password changed, is announced to the listeners so its session ends.
   */
  authorize(
    identity: Asker,
    action: "publish" | "subscribe",
    topic: string,
  ): boolean | Promise<boolean> {
    if (identity.device) return this.authorizeDevice(identity.device, action, topic);
    const cached = this.clients.get(key(identity));
    if (cached && Date.now() - cached.loadedAt < this.refreshMs) {
      return aclAllows(cached.acls, action, topic);
    }
    return this.reload(identity, cached).then((acls) =>
      acls ? aclAllows(acls, action, topic) : false,
    );
  }

  /** The HTTP callback's question: the identity comes from the username alone (EMQX's). */
  async authorizeUsername(
    mqttUsername: string,
    action: "publish" | "subscribe",
    topic: string,
  ): Promise<boolean> {
    const device = parseDeviceUsername(mqttUsername);
    if (device) return this.authorizeDevice(device, action, topic);
    const identity = parseBrokerUsername(mqttUsername);
    if (!identity) return false;
    return this.authorize(identity, action, topic);
  }

  /** A device on its own topics; its owner (for the broadcast topics) read again when stale. */
  private authorizeDevice(
    device: DeviceBrokerIdentity,
    action: "publish" | "subscribe",
    topic: string,
  ): boolean | Promise<boolean> {
    const clientId = deviceBrokerUsername(device.teamId, device.deviceId);
    const cached = this.devices.get(clientId);
    if (cached && Date.now() - cached.loadedAt < this.refreshMs) {
      return deviceMayUse(device, cached.owner, action, topic);
    }
    return findDeviceForBroker(this.db, device.deviceId).then((row) => {
      if (!row || row.team_id !== device.teamId) {
        this.deviceChanged(device.teamId, device.deviceId);
        return false;
      }
      if (cached && cached.passwordDigest !== row.broker_password_digest) {
        this.deviceChanged(device.teamId, device.deviceId);
        return false;
      }
      const owner = { applicationId: row.application_id, projectId: row.project_id };
      this.devices.set(clientId, {
        owner,
        passwordDigest: row.broker_password_digest,
        loadedAt: Date.now(),
      });
      return deviceMayUse(device, owner, action, topic);
    });
  }

  /**
   * A device's credentials changed or it was deleted (or moved): forget what was cached and end
   * its session; an agent with valid credentials reconnects with them.
   */
  deviceChanged(teamId: string, deviceId: string): void {
    const clientId = deviceBrokerUsername(teamId, deviceId);
    this.devices.delete(clientId);
    for (const listener of this.listeners) {
      listener({ teamId, username: clientId, clientId, disconnect: true });
    }
  }

  /** A client changed through the API: forget what was cached, and tell the broker. */
  changed(change: BrokerChange): void {
    this.clients.delete(key(change));
    for (const listener of this.listeners) listener(change);
  }

  onChange(listener: (change: BrokerChange) => void): void {
    this.listeners.push(listener);
  }

  private remember(identity: BrokerIdentity, acls: BrokerAcl[], passwordHash: string) {
    this.clients.set(key(identity), { acls, passwordHash, loadedAt: Date.now() });
  }

  private async reload(
    identity: BrokerIdentity,
    previous: CachedClient | undefined,
  ): Promise<BrokerAcl[] | undefined> {
    const row = await findBrokerCredential(this.db, identity.teamId, identity.username);
    if (!row) {
      this.clients.delete(key(identity));
      if (previous) this.changed({ ...identity, disconnect: true });
      return undefined;
    }
    if (previous && previous.passwordHash !== row.password_hash) {
      this.changed({ ...identity, disconnect: true });
      this.remember(identity, row.acls, row.password_hash);
      return undefined;
    }
    this.remember(identity, row.acls, row.password_hash);
    return row.acls;
  }
}

/** Whether a stored digest is this one, in constant time (none stored: never). */
function sameDigest(stored: string | null, digest: string): boolean {
  if (stored === null || stored.length !== digest.length) return false;
  return timingSafeEqual(Buffer.from(stored), Buffer.from(digest));
}

declare module "../core/trpc" {
  interface Context {
    /** The team broker's access service: told of every client change (none: BROKER_MODE=off). */
    broker?: BrokerAccess;
    /** The platform's own side of the broker (the devices' channel), when it has one. */
    brokerTransport?: PlatformTransport;
  }
}
