// The health tab a rollout adds to the flows it serves a device: a catch node of uncaught errors on
// each of the author's tabs (none on a disabled one), linked to the tab's report; the report the
// function node builds, run as Node-RED runs it, is one the health route takes whatever the error
// carried (a long name, a NUL, a lone surrogate); a snapshot of the device leaves every added node
// out.
import { RolloutHealthReport } from "@flowplane/contract";
import { describe, expect, test } from "vitest";
import { withHealthTab, withoutHealthTab } from "../../src/devices/health-tab";

const options = {
  baseUrl: "https://flowplane.example",
  tokenSecret: "a-secret-for-the-health-tab-test",
  rolloutId: "rollout1",
  deviceId: "device1",
};
const flows = [
  { id: "t1", type: "tab", label: "one" },
  { id: "t2", type: "tab", label: "off", disabled: true },
  { id: "n1", type: "inject", z: "t1", wires: [["n2"]] },
  { id: "n2", type: "function", z: "t1", func: "throw new Error('x')", wires: [] },
];

/** The report the function node sends for this message, as Node-RED would run it. */
function reportFor(msg: Record<string, unknown>) {
  const served = withHealthTab(flows, options) as { id: string; func?: string }[];
  const fn = served.find((n) => n.id === "flowplane-rollout-health-report")!;
  const out = new Function("msg", fn.func!)(msg) as {
    url: string;
    method: string;
    headers: Record<string, string>;
    payload: string;
  };
  return out;
}

describe("the health tab", () => {
  test("a catch node of uncaught errors on each enabled tab, linked to the tab's report", () => {
    const served = withHealthTab(flows, options) as Record<string, unknown>[];
    const catches = served.filter((n) => n.type === "catch");
    expect(catches.map((n) => n.z)).toEqual(["t1"]);
    expect(catches[0]).toMatchObject({ uncaught: true, scope: null });
    const tab = served.find((n) => n.id === "flowplane-rollout-health")!;
    expect(tab).toMatchObject({ type: "tab", locked: true, disabled: false });
    // The author's nodes are untouched, and served again it is added once.
    expect(served.slice(0, flows.length)).toEqual(flows);
    expect(withHealthTab(served, options)).toEqual(served);
    expect(withoutHealthTab(served)).toEqual(flows);
  });

  test("the report goes to the route with the credential, and the route takes whatever it says", () => {
    const started = reportFor({ topic: "started" });
    expect(started.url).toBe(
      "https://flowplane.example/api/v1/rollouts/rollout1/devices/device1/health",
    );
    expect(started.method).toBe("POST");
    expect(started.headers.authorization).toMatch(/^Bearer [A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(started.payload)).toEqual({ event: "started" });
    const nasty = reportFor({
      error: {
        message: `${"😀".repeat(1500)}\u0000`,
        source: { id: "n2", type: "function", name: `a\ud800b${"n".repeat(1000)}` },
      },
    });
    const body = JSON.parse(nasty.payload);
    expect(body.event).toBe("error");
    expect(RolloutHealthReport.safeParse(body).success).toBe(true);
    expect(body.source.name.startsWith("a\ufffdb")).toBe(true);
    expect(body.message.length).toBeLessThanOrEqual(2000);
  });
});
