// What a rollout adds to the flows it serves a device it watches (docs/rollouts.md): a tab of its
// own, locked, that tells the platform each time Node-RED starts the flows and every error a flow
// raises that no catch node of the flow's author handles. Each of the author's tabs gets a catch
// node (`uncaught`: only what nothing else caught) linked to that tab; the tab posts to the
// rollout's health route with a credential that reaches that route, for that device and rollout,
// and nothing else. A snapshot taken of the device leaves these nodes out (`withoutHealthTab`).
import { rolloutHealthToken } from "@flowplane/auth";

/** Every node the rollout adds has an id that starts with this. */
export const HEALTH_PREFIX = "flowplane-rollout-health";
const TAB = HEALTH_PREFIX;
const LINK_IN = `${HEALTH_PREFIX}-in`;

type FlowNode = Record<string, unknown> & { id?: unknown; type?: unknown; z?: unknown };

/** Whether a node is one the rollout added. */
const added = (node: FlowNode) => typeof node.id === "string" && node.id.startsWith(HEALTH_PREFIX);

/** The flows without what a rollout added (a snapshot of the device keeps only the author's). */
export function withoutHealthTab<T>(flows: T[]): T[] {
  return flows.filter((node) => !added(node as FlowNode));
}

/** The function that turns a catch node's message (or the start) into the health report. */
function reportFunction(url: string, token: string): string {
  return [
    // Text the platform can store, cut to its bounds by code points: no NUL, no lone surrogate.
    "const text = (value, max) => {",
    "  if (value === undefined || value === null) return undefined;",
    "  const clean = String(value).replace(/\\u0000/g, '')",
    "    .replace(/[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]/g, '\\ufffd');",
    "  let out = '';",
    "  for (const c of clean) { if (out.length + c.length > max) break; out += c; }",
    "  return out;",
    "};",
    "const error = msg.error || {};",
    "const source = error.source || {};",
    'const body = msg.topic === "started"',
    '  ? { event: "started" }',
    '  : { event: "error", message: text(error.message || "error", 2000),',
    "      source: { id: text(source.id, 64), type: text(source.type, 128), name: text(source.name, 256) } };",
    "return {",
    `  url: ${JSON.stringify(url)},`,
    '  method: "POST",',
    `  headers: { "content-type": "application/json", authorization: ${JSON.stringify(`Bearer ${token}`)} },`,
    "  payload: JSON.stringify(body),",
    "};",
  ].join("\n");
}

export interface HealthTabOptions {
  /** The platform's base URL, as the device reaches it (its forgeURL). */
  baseUrl: string;
  tokenSecret: string;
  rolloutId: string;
  deviceId: string;
}

/** The flows with the rollout's health tab and a catch node on each of the author's tabs. */
export function withHealthTab(flows: unknown[], options: HealthTabOptions): unknown[] {
  const nodes = withoutHealthTab(flows as FlowNode[]);
  const tabs = nodes.filter((node) => node.type === "tab" && node.disabled !== true);
  const url = `${options.baseUrl}/api/v1/rollouts/${options.rolloutId}/devices/${options.deviceId}/health`;
  const token = rolloutHealthToken(options.tokenSecret, options.rolloutId, options.deviceId);
  const outs = tabs.map((tab) => `${HEALTH_PREFIX}-out-${String(tab.id)}`);
  const perTab = tabs.flatMap((tab, i) => [
    {
      id: `${HEALTH_PREFIX}-catch-${String(tab.id)}`,
      type: "catch",
      z: tab.id,
      name: "Flowplane rollout: uncaught errors",
      scope: null,
      uncaught: true,
      x: 150,
      y: 2000,
      wires: [[outs[i]]],
    },
    {
      id: outs[i],
      type: "link out",
      z: tab.id,
      name: "to the rollout's health check",
      mode: "link",
      links: [LINK_IN],
      x: 400,
      y: 2000,
      wires: [],
    },
  ]);
  const report = `${HEALTH_PREFIX}-report`;
  const request = `${HEALTH_PREFIX}-request`;
  const tab = [
    {
      id: TAB,
      type: "tab",
      label: "Flowplane rollout health",
      disabled: false,
      locked: true,
      info: "Added by Flowplane while a rollout watches this device: it reports each start of the flows and every error no catch node of yours handles. It goes with the rollout's next deploy, and a snapshot of the device leaves it out.",
      env: [],
    },
    {
      id: LINK_IN,
      type: "link in",
      z: TAB,
      name: "uncaught errors",
      links: outs,
      x: 120,
      y: 80,
      wires: [[report]],
    },
    {
      id: `${HEALTH_PREFIX}-started`,
      type: "inject",
      z: TAB,
      name: "flows started",
      props: [{ p: "topic", vt: "str" }],
      topic: "started",
      repeat: "",
      crontab: "",
      once: true,
      onceDelay: 0.1,
      x: 130,
      y: 140,
      wires: [[report]],
    },
    {
      id: report,
      type: "function",
      z: TAB,
      name: "health report",
      func: reportFunction(url, token),
      outputs: 1,
      x: 360,
      y: 110,
      wires: [[request]],
    },
    {
      id: request,
      type: "http request",
      z: TAB,
      name: "to Flowplane",
      method: "use",
      ret: "txt",
      paytoqs: "ignore",
      url: "",
      persist: false,
      senderr: false,
      headers: [],
      x: 570,
      y: 110,
      wires: [[]],
    },
  ];
  return [...nodes, ...perTab, ...tab];
}
