// The audit log: the one writer (recordAudit) and the reading of the three logs.
export * from "./read";
export * from "./record";
