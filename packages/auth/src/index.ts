export * from "./permissions";
export * from "./permission-words";
export * from "./token-digest";
export * from "./token-format";
export * from "./token-scope";
export * from "./passwords";
export * from "./mqtt";
export * from "./credentials";
