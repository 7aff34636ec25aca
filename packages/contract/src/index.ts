export * from "./common";
export * from "./errors";
export * from "./roles";
export * from "./team";
export * from "./token";
export * from "./user";
