// Hosted instances (FlowFuse's "projects"): an instance is a Node-RED the platform runs, in one of
// a team's applications, with its settings, environment variables, state and log.
import { z } from "zod";
import { Id, Links, Text, Timestamp } from "./common";
import { ApplicationSummary } from "./applications";
import { TeamSummary } from "./teams/teams";
import { eachNameOnce } from "./refinements";

/** Names become host names: letters, digits and '-', starting with a letter. */
export const INSTANCE_NAME = /^[a-zA-Z][a-zA-Z0-9-]*$/;

/** Names FlowFuse keeps for itself, refused whatever their case. */
export const RESERVED_INSTANCE_NAMES: readonly string[] = [
  "app",
  "www",
  "node-red",
  "nodered",
  "forge",
  "support",
  "help",
  "accounts",
  "account",
  "status",
  "billing",
  "mqtt",
  "broker",
  "egress",
  "npm",
  "registry",
];

export const InstanceName = Text.min(1, "Must not be blank")
  .max(63, "At most 63 characters")
  .regex(INSTANCE_NAME, "Letters, digits and '-', starting with a letter")
  .describe("Unique on the platform without regard to case; letters, digits and '-'");

export const InstanceId = z.uuid("Not an instance id (a UUID)");

/** Variables the platform sets itself: read-only, and dropped from what is written. */
export const PLATFORM_ENV_PREFIX = "FF_";

export const EnvVarName = Text.min(1, "Must not be blank")
  .max(128)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "Letters, digits and '_', not starting with a digit");

export const EnvVar = z
  .strictObject({
    name: EnvVarName,
    value: Text.max(32_768, "At most 32,768 characters"),
    hidden: z
      .boolean()
      .optional()
      .describe(
        "Hidden values are never returned (an empty string instead); writing a hidden variable with an empty value keeps its value",
      ),
  })
  .meta({ id: "EnvVar" });
export type EnvVar = z.infer<typeof EnvVar>;

export const EnvVars = z.array(EnvVar).max(500, "At most 500 variables").superRefine(eachNameOnce);

export const InstanceState = z
  .enum([
    "running",
    "stopped",
    "suspended",
    "starting",
    "stopping",
    "restarting",
    "suspending",
    "crashed",
    "unknown",
  ])
  .meta({ id: "InstanceState" });
export type InstanceState = z.infer<typeof InstanceState>;

export const InstanceMeta = z
  .object({
    state: InstanceState.describe(
      "The action under way if any; else `suspended` when suspended; else what the runtime reports",
    ),
    isDeploying: z.boolean(),
    versions: z.object({ "node-red": z.string() }).optional(),
  })
  .meta({ id: "InstanceMeta" });

export const InstanceSummary = z
  .object({
    id: InstanceId,
    name: z.string(),
    url: z
      .string()
      .nullable()
      .describe(
        "The editor's URL: the platform's proxy on the instance's own host (`<name>.<EDITOR_DOMAIN>`), also while it is stopped or suspended (the proxy then answers 503); null when the runtime holds nothing of it",
      ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    links: Links,
  })
  .meta({ id: "InstanceSummary" });
export type InstanceSummary = z.infer<typeof InstanceSummary>;

export const InstanceStatus = z
  .object({ id: InstanceId, name: z.string(), meta: InstanceMeta })
  .meta({ id: "InstanceStatus" });
export type InstanceStatus = z.infer<typeof InstanceStatus>;

export const InstanceSettings = z
  .object({
    env: z.array(EnvVar.required({ hidden: true })),
    palette: z
      .object({
        modules: z
          .record(z.string(), z.string())
          .describe(
            "What the instance's palette installed (`{ package: version }`): installed again at every start, carried by its snapshots",
          ),
      })
      .optional(),
  })
  .catchall(z.unknown())
  .meta({ id: "InstanceSettings" });

export const Instance = InstanceSummary.extend({
  safeName: z.string(),
  hostname: z.string(),
  application: ApplicationSummary,
  team: TeamSummary,
  projectType: z.object({ id: Id, name: z.string() }),
  stack: z.object({
    id: Id,
    name: z.string(),
    label: z.string().nullable(),
    properties: z.record(z.string(), z.unknown()),
    replacedBy: Id.nullable(),
    links: Links,
  }),
  template: z.object({
    id: Id,
    name: z.string(),
    description: z.string().nullable(),
    settings: z.record(z.string(), z.unknown()),
    policy: z.record(z.string(), z.unknown()),
    links: Links,
  }),
  settings: InstanceSettings.describe(
    "`env`: the instance's variables (hidden values blank) and the platform's read-only `FF_*`; `palette.modules`: the modules its palette installed",
  ),
  launcherSettings: z.object({ healthCheckInterval: z.number(), disableAutoSafeMode: z.boolean() }),
  meta: InstanceMeta,
  flowLastUpdatedAt: Timestamp.nullable(),
}).meta({ id: "Instance" });
export type Instance = z.infer<typeof Instance>;

export const InstanceList = z
  .object({ count: z.number().int(), instances: z.array(InstanceSummary) })
  .meta({ id: "InstanceList" });

export const InstanceStatusList = z
  .object({
    count: z.number().int(),
    instances: z.array(
      z.object({ id: InstanceId, meta: InstanceMeta, flowLastUpdatedAt: Timestamp.nullable() }),
    ),
  })
  .meta({ id: "InstanceStatusList" });

export const TeamApplicationList = z
  .object({
    count: z.number().int(),
    applications: z.array(
      ApplicationSummary.extend({ instances: z.array(InstanceSummary) }).meta({
        id: "TeamApplication",
      }),
    ),
  })
  .meta({ id: "TeamApplicationList" });

export const TeamApplicationStatusList = z
  .object({
    count: z.number().int(),
    applications: z.array(z.object({ id: Id, instances: z.array(InstanceStatus) })),
  })
  .meta({ id: "TeamApplicationStatusList" });

/** An instance named in a path: any id-shaped value (an unknown one is 404, as every id). */
export const InstanceIdInput = z.strictObject({ instanceId: Id });

/** A script's credential for one instance's editor and admin API (and nothing else). */
export const CreateEditorTokenInput = z.strictObject({
  instanceId: Id,
  expiresIn: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .optional()
    .describe("Seconds until it expires (60 to 86400; default 3600)"),
});
export type CreateEditorTokenInput = z.infer<typeof CreateEditorTokenInput>;

export const EditorToken = z
  .object({
    token: z.string().describe("`fpe_…`: the Authorization bearer for the editor's admin API"),
    expiresAt: Timestamp,
    url: z.string().describe("The editor's address, where the token is accepted"),
    permissions: z
      .enum(["*", "read"])
      .describe("What it allows now: members and owners deploy, viewers read"),
  })
  .meta({ id: "EditorToken" });
export type EditorToken = z.infer<typeof EditorToken>;

export const CreateInstanceInput = z.strictObject({
  name: InstanceName,
  applicationId: Id.describe("The application it belongs to; its team's owners create"),
  projectType: Id.optional().describe("The instance type; the platform's default when absent"),
  stack: Id.optional().describe("The stack (a Node-RED version); the type's default when absent"),
  template: Id.optional().describe("The template of default settings; the default when absent"),
});

export const UpdateInstanceInput = z.strictObject({
  instanceId: Id,
  name: InstanceName.optional().describe("Owners"),
  settings: z
    .strictObject({ env: EnvVars.optional() })
    .optional()
    .describe(
      "Members may send `settings.env` alone; `FF_*` variables are the platform's and are dropped",
    ),
});

export const CheckInstanceNameInput = z.strictObject({ name: Text.max(1024) });
export const NameAvailable = z.object({ available: z.literal(true) });

export const InstanceLogsInput = z.strictObject({
  instanceId: Id,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(30)
    .describe("How many entries (1–1000, default 30)"),
  cursor: Text.max(17)
    .regex(/^-?\d{1,16}$/, "A log entry's `ts`, with '-' in front to page backwards")
    .optional()
    .describe("Entries after this entry's `ts`; with a leading '-', the entries before it"),
});

export const LogEntry = z
  .object({
    ts: z.number().int().describe("Milliseconds since the epoch; unique within the instance"),
    level: z.string(),
    msg: z.string(),
  })
  .meta({ id: "InstanceLogEntry" });

export const InstanceLogs = z
  .object({
    meta: z.object({
      next_cursor: z.string().optional(),
      previous_cursor: z.string().optional(),
      first_entry: z.string().optional(),
      last_entry: z.string().optional(),
    }),
    log: z.array(LogEntry),
  })
  .meta({ id: "InstanceLogs" });
