// The platform's own side of the team broker, as the devices' channel uses it.
import type { DeviceBrokerIdentity } from "@flowplane/auth";

/**
 * The platform's own side of the broker (the devices' channel): it publishes commands and hears
 * what devices publish, as a client with no ACL would, and learns when a device's session begins
 * and ends. The embedded broker is this process: no network, no credential.
 */
export interface PlatformTransport {
  publish(topic: string, payload: string): Promise<void>;
  subscribe(filter: string, handler: (topic: string, payload: Buffer) => void): Promise<void>;
  /** A device's MQTT session began (`connected`) or ended. */
  onDeviceSession(listener: (device: DeviceBrokerIdentity, connected: boolean) => void): void;
}
