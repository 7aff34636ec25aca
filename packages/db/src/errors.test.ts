// Which driver errors are the connection failing (a 503 and a retry) rather than the statement.
import { describe, expect, test } from "vitest";
import {
  asDatabaseError,
  DatabaseUnavailableError,
  isConnectionFailure,
  unlessMalformedId,
} from "./errors";

const withCode = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(code), { code, ...extra });

describe("isConnectionFailure", () => {
  test("socket errors, node-postgres' connection messages, SQLSTATE 08, 57P01–03 and 53300", () => {
    for (const error of [
      withCode("ECONNREFUSED"),
      withCode("ECONNRESET"),
      withCode("EPIPE"),
      withCode("ENOENT", { syscall: "connect" }),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new Error("Client has encountered a connection error and is not queryable"),
      withCode("08006"),
      withCode("08001"),
      withCode("57P01"),
      withCode("57P02"),
      withCode("57P03"),
      withCode("53300"),
      new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")]),
    ]) {
      expect(isConnectionFailure(error), error.message).toBe(true);
      expect(asDatabaseError(error)).toBeInstanceOf(DatabaseUnavailableError);
    }
  });

  test("not a statement's failure, a file's absence or anything else", () => {
    for (const error of [
      withCode("23505"),
      withCode("40001"),
      withCode("57014"),
      withCode("ENOENT", { syscall: "open" }),
      new TypeError("fetch failed", { cause: withCode("ECONNREFUSED") }),
      new Error("boom"),
      "ECONNREFUSED",
      undefined,
    ]) {
      expect(isConnectionFailure(error)).toBe(false);
      expect(asDatabaseError(error)).toBe(error);
    }
  });
});

describe("unlessMalformedId", () => {
  test("a malformed id (SQLSTATE class 22) finds nothing; the database unavailable, or any other error, is thrown", async () => {
    expect(await unlessMalformedId(Promise.resolve(7))).toBe(7);
    for (const code of ["22P02", "22021", "22001"]) {
      expect(await unlessMalformedId(Promise.reject(withCode(code)))).toBeUndefined();
    }
    const unavailable = new DatabaseUnavailableError(withCode("ECONNREFUSED"));
    await expect(unlessMalformedId(Promise.reject(unavailable))).rejects.toBe(unavailable);
    await expect(unlessMalformedId(Promise.reject(withCode("42P01")))).rejects.toThrow("42P01");
  });
});
