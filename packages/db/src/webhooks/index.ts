// Webhooks: a team's hooks and their delivery queue (docs/webhooks.md).
export * from "./hooks";
export * from "./deliveries";
