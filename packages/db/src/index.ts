export * from "./audit";
export * from "./create-db";
export * from "./errors";
export * from "./ids";
export * from "./schema";
export * from "./teams";
export * from "./tokens";
export * from "./users";
