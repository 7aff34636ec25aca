// A snapshot of what a connected device runs, as the device itself reports it: the agent's `upload`
// command (FlowFuse's createSnapshotFromDevice / createDeviceSnapshot) answers its flows, its
// credentials (encrypted with the device's credentialSecret, as its Node-RED keeps them) and its
// package (the modules it runs). A flow changed on the device — in its editor, in developer mode —
// is in it, which the platform's own record of the snapshot it gave the device cannot hold. The
// variables and Node-RED settings are not the device's to report: they stay what the platform
// gives it (the snapshot it runs with its group's and its own variables; else, as FlowFuse does,
// the instance's for an instance's device, and none for an application's).
import { type DeviceDetail, findProject } from "@flowplane/db";
import { z } from "zod";
import { ApiError } from "../core/errors";
import type { Context } from "../core/trpc";
import { withoutHealthTab } from "../devices/index";
import { contentOfInstance, openCredentials, type SnapshotContent } from "./content";

/** The agent's reply to `upload` (lib/mqtt.js getUploadData): null where it runs no Node-RED. */
const Uploaded = z.object({
  flows: z.array(z.unknown()).nullish(),
  credentials: z.unknown().optional(),
  package: z
    .object({
      modules: z.record(z.string(), z.string()).optional(),
      dependencies: z.record(z.string(), z.string()).optional(),
    })
    .nullish(),
});

/** What the platform gives the device besides its flows: the base the device's report goes on. */
type Base = (device: DeviceDetail) => Promise<SnapshotContent | undefined>;

/**
 * What the device reports running, when it is connected on the channel and runs a Node-RED;
 * undefined otherwise (the caller keeps to what the platform knows). A device that does not
 * answer is FlowFuse's 400 `no_response`.
 */
export async function contentUploadedBy(
  ctx: Pick<Context, "db" | "deviceChannel">,
  device: DeviceDetail,
  known: Base,
): Promise<SnapshotContent | undefined> {
  const channel = ctx.deviceChannel;
  if (!channel?.isConnected(device.id)) return undefined;
  const reply = Uploaded.safeParse(await channel.request(device.team_id, device.id, "upload", {}));
  if (!reply.success) {
    throw new ApiError(400, "invalid_state", "The device's report of what it runs is not readable");
  }
  const { flows, credentials, package: pkg } = reply.data;
  if (!flows) return undefined;
  let opened: Record<string, unknown>;
  try {
    opened = openCredentials(credentials, device.credential_secret);
  } catch {
    throw new ApiError(
      400,
      "invalid_state",
      "The device's credentials do not open with its credentialSecret",
    );
  }
  const base = (await known(device)) ?? (await instanceBase(ctx, device)) ?? empty();
  const reported = pkg?.modules ?? pkg?.dependencies;
  const modules = reported ? { ...reported } : { ...base.settings.modules };
  // The version it reports running (exact), over its package's range.
  if (device.node_red_version) modules["node-red"] = device.node_red_version;
  return {
    // What a rollout added while it watched the device is not the device's to keep.
    flows: withoutHealthTab(flows),
    settings: { ...base.settings, modules },
    secrets: { credentials: opened, env: base.secrets.env },
  };
}

/** An instance's device runs with the instance's settings and variables (FlowFuse's base). */
async function instanceBase(ctx: Pick<Context, "db">, device: DeviceDetail) {
  if (device.project_id === null) return undefined;
  const project = await findProject(ctx.db, device.project_id);
  return project ? contentOfInstance(ctx.db, project) : undefined;
}

const empty = (): SnapshotContent => ({
  flows: [],
  settings: { settings: {}, env: [], modules: {} },
  secrets: { credentials: {}, env: {} },
});
