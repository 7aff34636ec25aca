// Snapshots: what an instance (and next a device) ran at one moment — flows, credentials,
// settings, variables and the modules its flows use — taken, listed, read, renamed, deleted,
// exported with a caller's secret, imported, rolled back to, and set as the target of devices.
// FlowFuse's routes, fields and envelopes (map §1.13, §1.20, §9.2).
import { z } from "zod";
import { Id, Links, ListMeta, PageInput, Text, Timestamp } from "./common";
import { EnvVarName } from "./instances";
import { UserSummary } from "./teams/members";
import { checkStorableJson } from "./refinements";

/** Who took a snapshot (inline, as a reference cannot be nullable in OpenAPI 3.0). */
const SnapshotUser = z
  .object(UserSummary.shape)
  .nullable()
  .describe("Who took it; null when their account is gone");

/** How deep and how large a flow may be: Node-RED's flows are wide, not deep. */
const FLOW_LIMITS = { depth: 32, nodes: 50_000 };

/** Every key and string storable (jsonb refuses NUL and lone surrogates), nesting bounded. */
function checkStorable(value: unknown, ctx: z.RefinementCtx) {
  checkStorableJson(value, ctx, FLOW_LIMITS.depth);
}

/** Node-RED's flow: an array of nodes (objects). */
export const Flows = z
  .array(z.record(Text.max(1024), z.unknown()))
  .max(FLOW_LIMITS.nodes)
  .superRefine(checkStorable)
  .describe("Node-RED's flow configuration: an array of nodes");

/** Node-RED's encrypted credentials: `{ "$": "<iv><data>" }` (AES-256-CTR, SHA-256 of a secret). */
export const EncryptedCredentials = z
  .strictObject({ $: Text.max(20 * 1024 * 1024) })
  .meta({ id: "EncryptedCredentials" });

/** Credentials as a flow's nodes hold them: by node id, each node's fields. */
export const PlainCredentials = z
  .record(Text.max(1024), z.record(Text.max(1024), z.unknown()))
  .superRefine(checkStorable);

/** npm's rules for a package name (scoped or not), and a version or range. */
export const ModuleName = Text.min(1)
  .max(214)
  .regex(/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/, "Not an npm package name");
export const ModuleVersion = Text.min(1)
  .max(64)
  .regex(/^[0-9A-Za-z.^~<>=*|+ -]+$/, "Not a version or range");
export const Modules = z
  .record(ModuleName, ModuleVersion)
  .refine((modules) => Object.keys(modules).length <= 200, "At most 200 modules")
  .describe('`{ "<package>": "<version>" }`: the modules the flows use (`node-red`: its version)')
  .meta({ id: "SnapshotModules" });

export const SnapshotOwnerType = z.enum(["instance", "device"]);

export const SnapshotSummary = z
  .object({
    id: Id,
    name: z.string(),
    description: z.string().describe("'' when none"),
    createdAt: Timestamp,
  })
  .meta({ id: "SnapshotSummary" });
export type SnapshotSummary = z.infer<typeof SnapshotSummary>;

export const Snapshot = SnapshotSummary.extend({
  updatedAt: Timestamp,
  ownerType: SnapshotOwnerType,
  projectId: Id.optional().describe("The instance that owns it (`ownerType` instance)"),
  deviceId: Id.optional().describe("The device that owns it (`ownerType` device)"),
  user: SnapshotUser,
  project: z
    .object({ id: Id, name: z.string(), createdAt: Timestamp, updatedAt: Timestamp, links: Links })
    .optional()
    .describe("The instance that owns it"),
  device: z
    .object({ id: Id, name: z.string(), links: Links })
    .optional()
    .describe("The device that owns it"),
  modules: z.record(z.string(), z.string()),
  links: Links,
}).meta({ id: "Snapshot" });
export type Snapshot = z.infer<typeof Snapshot>;

export const SnapshotList = z
  .object({ meta: ListMeta, count: z.number().int(), snapshots: z.array(Snapshot) })
  .meta({ id: "SnapshotList" });

/** A snapshot's settings on the wire: FlowFuse's `{ settings, env, modules }`. */
export const SnapshotContentSettings = z
  .object({
    settings: z.record(z.string(), z.unknown()),
    env: z
      .record(z.string(), z.string())
      .describe("The variables by name; hidden variables' values are blank (see `hiddenEnv`)"),
    hiddenEnv: z.array(z.string()).describe("The names of the hidden variables (Flowplane's)"),
    modules: z.record(z.string(), z.string()),
  })
  .meta({ id: "SnapshotSettings" });

export const FullSnapshot = z
  .object({
    id: Id,
    name: z.string(),
    description: z.string(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    ownerType: SnapshotOwnerType,
    user: SnapshotUser,
    settings: SnapshotContentSettings,
    flows: z.object({ flows: z.array(z.record(z.string(), z.unknown())) }),
  })
  .meta({ id: "FullSnapshot" });
export type FullSnapshot = z.infer<typeof FullSnapshot>;

export const ExportedSnapshot = FullSnapshot.extend({
  flows: z.object({
    flows: z.array(z.record(z.string(), z.unknown())),
    credentials: EncryptedCredentials.optional().describe(
      "The flows' credentials, encrypted with the `credentialSecret` the caller gave",
    ),
  }),
  settings: SnapshotContentSettings.extend({
    secretEnv: EncryptedCredentials.optional().describe(
      "The hidden variables' values (`{ NAME: value }`), encrypted with the caller's `credentialSecret` (Flowplane's)",
    ),
  }),
  exportedBy: UserSummary,
}).meta({ id: "ExportedSnapshot" });
export type ExportedSnapshot = z.infer<typeof ExportedSnapshot>;

// ---- Inputs ----

const SnapshotName = Text.trim().min(1, "Must not be blank").max(255);
const SnapshotDescription = Text.max(10_000);
/** A secret that credentials are encrypted with: the caller's to keep. */
export const CredentialSecret = Text.min(8, "At least 8 characters").max(1024);

export const SnapshotIdInput = z.strictObject({ snapshotId: Id });
export const InstanceSnapshotIdInput = z.strictObject({ instanceId: Id, snapshotId: Id });

export const ListInstanceSnapshotsInput = z.strictObject({ instanceId: Id, ...PageInput });

export const DeviceSnapshotIdInput = z.strictObject({ deviceId: Id, snapshotId: Id });
export const ListDeviceSnapshotsInput = z.strictObject({ deviceId: Id, ...PageInput });

export const ListApplicationSnapshotsInput = z.strictObject({
  applicationId: Id,
  deviceId: Id.optional().describe("Only the snapshots of this device of the application"),
  instanceId: Id.optional().describe("Only the snapshots of this instance of the application"),
  ...PageInput,
});

/** Variables given with a snapshot's content: FlowFuse's `{ NAME: value }` or our array. */
const SnapshotEnvInput = z.union([
  z.record(EnvVarName, Text.max(32_768)),
  z
    .array(
      z.strictObject({ name: EnvVarName, value: Text.max(32_768), hidden: z.boolean().optional() }),
    )
    .max(500),
]);

export const CreateInstanceSnapshotInput = z.strictObject({
  instanceId: Id,
  name: SnapshotName,
  description: SnapshotDescription.optional(),
  flows: z
    .union([
      Flows,
      z.strictObject({
        flows: Flows,
        credentials: z.union([EncryptedCredentials, PlainCredentials]).optional(),
      }),
    ])
    .optional()
    .describe(
      "The content to keep instead of the instance's own: Node-RED's flow array, or `{ flows, credentials }`. Absent: the instance's flows and credentials as deployed",
    ),
  credentials: z
    .union([EncryptedCredentials, PlainCredentials])
    .optional()
    .describe("The flows' credentials, encrypted with `credentialSecret` or plain"),
  credentialSecret: CredentialSecret.optional().describe(
    "The secret encrypted `credentials` were encrypted with",
  ),
  settings: z
    .strictObject({ modules: Modules.optional(), env: SnapshotEnvInput.optional() })
    .optional()
    .describe("Modules (and variables) to keep instead of the instance's own"),
  setAsTarget: z
    .boolean()
    .optional()
    .describe("Also make it the snapshot the instance's devices run"),
});

/** A snapshot of what a device runs: its name, and whether it becomes a target at once. */
export const CreateDeviceSnapshotInput = z.strictObject({
  deviceId: Id,
  name: SnapshotName,
  description: SnapshotDescription.optional(),
  setAsTarget: z
    .boolean()
    .optional()
    .describe(
      "Also make it the target: the device's own (`/snapshots`), or the instance's devices' (`/snapshot`)",
    ),
});

export const UpdateSnapshotInput = z.strictObject({
  snapshotId: Id,
  name: SnapshotName.optional(),
  description: SnapshotDescription.optional(),
});

export const ExportComponents = z
  .strictObject({
    flows: z.boolean().optional().describe("Include the flows (default true)"),
    credentials: z.boolean().optional().describe("Include the credentials (default true)"),
    envVars: z
      .union([z.enum(["all", "keys"]), z.literal(false)])
      .optional()
      .describe("`all` (default): names and values; `keys`: names only; false: none"),
  })
  .meta({ id: "SnapshotExportComponents" });

export const ExportSnapshotInput = z.strictObject({
  snapshotId: Id,
  credentialSecret: CredentialSecret.describe(
    "The credentials (and hidden variables) in the export are encrypted with it",
  ),
  components: ExportComponents.optional(),
});

export const ExportInstanceSnapshotInput = ExportSnapshotInput.extend({ instanceId: Id });

export const ImportSnapshotInput = z.strictObject({
  ownerId: Id.describe("The instance or device of the caller's team to import it into"),
  ownerType: SnapshotOwnerType.describe(
    "`instance`, or `device` (a device of an application: its snapshots are its own)",
  ),
  snapshot: z.strictObject({
    name: SnapshotName,
    description: SnapshotDescription.optional(),
    flows: z.strictObject({
      flows: Flows,
      credentials: z.union([EncryptedCredentials, PlainCredentials]).optional(),
    }),
    settings: z.strictObject({
      settings: z.record(Text.max(128), z.unknown()).superRefine(checkStorable).optional(),
      env: SnapshotEnvInput.optional(),
      hiddenEnv: z.array(EnvVarName).max(500).optional(),
      secretEnv: EncryptedCredentials.optional(),
      modules: Modules.optional(),
    }),
  }),
  credentialSecret: CredentialSecret.optional().describe(
    "The secret the export was made with: required when it carries credentials",
  ),
  components: ExportComponents.optional(),
});

export const RollbackInput = z.strictObject({
  instanceId: Id,
  snapshot: Id.describe("One of the instance's own snapshots"),
});

export const InstanceDeviceSettings = z
  .object({ targetSnapshot: Id.nullable().describe("The snapshot the instance's devices run") })
  .meta({ id: "InstanceDeviceSettings" });

export const SetInstanceDeviceTargetInput = z.strictObject({
  instanceId: Id,
  targetSnapshot: Id.nullable().describe(
    "One of this instance's snapshots (another's is 400 `invalid_snapshot`), or null to clear",
  ),
});

// ---- Importing flows into an instance (FlowFuse's POST /projects/{instanceId}/import) ----

/** Within the API's default body limit (1 MiB), so that a longer text is this field's 400. */
const JsonText = Text.max(1_000_000);

export const ImportInstanceFlowsInput = z.strictObject({
  instanceId: Id,
  flows: JsonText.describe("The flows, as JSON text: Node-RED's array of nodes").optional(),
  credentials: JsonText.describe(
    "The flows' credentials, as JSON text: Node-RED's encrypted `{ \"$\": … }` (with `credsSecret`) or plain by node id",
  ).optional(),
  credsSecret: Text.max(1024).describe("The secret the credentials were encrypted with").optional(),
});
export type ImportInstanceFlowsInput = z.infer<typeof ImportInstanceFlowsInput>;
