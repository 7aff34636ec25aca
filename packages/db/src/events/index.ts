// Events: what integrators hear of the platform (the stream, webhooks, notifications).
export * from "./record";
export * from "./read";
export * from "./sequencer";
export * from "./platform";
