// The catalogue: instance types, stacks and templates.
export * from "./catalogue";
