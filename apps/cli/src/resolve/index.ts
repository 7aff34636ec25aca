// How a command line names a thing, for every command: the one rule (rule.ts) and its look-ups,
// one module per kind of thing. Commands import from here.
export { listEvery, type Named, pick, type Ref } from "./rule";
export { resolveMember, resolveTeam, resolveTeamType, type TeamRef } from "./teams";
export {
  type ApplicationRef,
  type InstanceRef,
  resolveApplication,
  resolveAssignment,
  resolveInstance,
} from "./instances";
export {
  type DeviceRef,
  resolveDevice,
  resolveDeviceGroup,
  resolveProvisioningToken,
  resolveTeamDeviceGroup,
} from "./devices";
export { resolveSnapshot } from "./snapshots";
export { resolveRollout } from "./rollouts";
export { type PipelineRef, resolvePipeline, resolveStage } from "./pipelines";
export { invitee, resolveMyInvitation, resolveTeamInvitation } from "./invitations";
export { resolveUser, USER_ADMINISTRATION } from "./users";
export { resolveBrokerClient, resolveBrokerToken, resolveToken } from "./tokens";
