// @flowplane/client: Flowplane's API for TypeScript programs, in Node 20+ and browsers (fetch
// only). `createFlowplaneClient` answers tRPC's client typed by the API's router; the one route for
// people the router has no procedure for is a function of its own (rest.ts); errors read as the
// contract's codes (errors.ts).
export type { FlowplaneRouter } from "#router";
export type { ErrorBody, ErrorCode } from "@flowplane/contract";
export { envelopeError, FlowplaneClientError, flowplaneError } from "./errors";
export { registrationWaits } from "./rest";
export { type DeviceLogLine, type FollowOptions, followDeviceLog } from "./device-log";
export { createFlowplaneClient, type FlowplaneClient, type FlowplaneClientOptions } from "./client";
export {
  type FollowEventsOptions,
  followTeamEvents,
  listTeamEvents,
  type TeamEvent,
  type TeamEventsQuery,
} from "./events";
