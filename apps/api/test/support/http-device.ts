// A device that speaks the agent's HTTP protocol as the real agent does, without Node-RED: it
// checks in, downloads the snapshot a 409 names, reports running it, and — when what it was
// served carries a rollout's health tab — reports its flows' start to the URL with the credential
// the tab's function node holds (read from the served flows, as Node-RED would run them). The
// rollout tests use it, the CLI's too (`@flowplane/api/testing/http-device`).
import { expect } from "vitest";

interface Health {
  url: string;
  authorization: string;
}

/** The health tab's report URL and credential, from the served flows (none: no tab). */
export function healthOf(flows: { id?: string; func?: string }[]): Health | undefined {
  const report = flows.find((node) => node.id === "flowplane-rollout-health-report");
  if (!report?.func) return undefined;
  const url = /url: ("[^"]+")/.exec(report.func)?.[1];
  const authorization = /authorization: ("[^"]+")/.exec(report.func)?.[1];
  if (!url || !authorization) return undefined;
  return { url: JSON.parse(url), authorization: JSON.parse(authorization) };
}

export class HttpDevice {
  runs: string | null = null;
  settings: string | null = null;
  /** How many snapshots it downloaded. */
  downloads = 0;
  flows: { id?: string; type?: string; func?: string }[] = [];
  health: Health | undefined;
  /** What its "flows" do when they start (after reporting the start). */
  onStart?: () => Promise<unknown> | unknown;

  constructor(
    /** The platform it checks in with: its address. */
    private readonly server: { url: string },
    readonly id: string,
    private readonly token: string,
    private readonly applicationId: string,
  ) {}

  private checkIn() {
    return fetch(`${this.server.url}/api/v1/devices/${this.id}/live/state`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        state: "running",
        application: this.applicationId,
        project: null,
        snapshot: this.runs,
        settings: this.settings,
        agentVersion: "4.2.1",
        nodeRedVersion: "4.1.15",
      }),
    });
  }

  /** One check-in; when told to run something else, it deploys it and checks in again. */
  async follow() {
    const reply = await this.checkIn();
    if (reply.status === 200) return;
    expect(reply.status).toBe(409);
    const wanted = (await reply.json()) as { snapshot: string | null; settings: string };
    const changed = wanted.snapshot !== this.runs;
    if (changed && wanted.snapshot !== null) {
      const snapshot = await fetch(`${this.server.url}/api/v1/devices/${this.id}/live/snapshot`, {
        headers: { authorization: `Bearer ${this.token}` },
      });
      expect(snapshot.status).toBe(200);
      this.flows = ((await snapshot.json()) as { flows: HttpDevice["flows"] }).flows;
      this.downloads++;
      this.health = healthOf(this.flows);
    }
    this.runs = wanted.snapshot;
    this.settings = wanted.settings;
    expect((await this.checkIn()).status).toBe(200);
    if (changed && this.health) {
      await this.report({ event: "started" });
      await this.onStart?.();
    }
  }

  /** An event of its agent (`crashed` …), as the agent posts it to the platform's log. */
  async audit(body: Record<string, unknown>) {
    const reply = await fetch(`${this.server.url}/logging/device/${this.id}/audit`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(reply.status).toBe(200);
  }

  /** A report of its flows to the rollout, as the health tab posts it (to this server). */
  async report(body: Record<string, unknown>) {
    const url = new URL(this.health!.url);
    const reply = await fetch(`${this.server.url}${url.pathname}`, {
      method: "POST",
      headers: { authorization: this.health!.authorization, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
    return reply.json();
  }
}
