// A request's logger: Fastify makes one for every request; ours is made only when the request
// writes at an enabled level, and what it writes is what pino's child would: the request id bound,
// tokens and passwords redacted, the route's own level obeyed.
import Fastify from "fastify";
import { Writable } from "node:stream";
import { describe, expect, test } from "vitest";
import { createLogger, requestLogOptions } from "../../src/plugins/request-log";

async function appLoggingAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify(requestLogOptions(createLogger(level, stream)));
  app.get("/quiet", async (request) => {
    request.log.debug({ detail: 1 }, "below the level");
    return {};
  });
  app.get("/loud", async (request) => {
    request.log.warn({ password: "hunter2", nested: { authorization: "Bearer x" } }, "loud");
    request.log.child({ part: "inner" }).error("from a child");
    return {};
  });
  app.get("/own-level", { logLevel: "debug" }, async (request) => {
    request.log.debug("the route's own level");
    return {};
  });
  await app.ready();
  return { app, lines };
}

describe("a request's logger", () => {
  test("writes nothing below the level, and the request line only at debug", async () => {
    const { app, lines } = await appLoggingAt("info");
    expect((await app.inject({ url: "/quiet" })).statusCode).toBe(200);
    await app.close();
    expect(lines).toEqual([]);

    const debug = await appLoggingAt("debug");
    await debug.app.inject({ url: "/quiet" });
    await debug.app.close();
    expect(debug.lines.map((l) => l.msg)).toEqual(["below the level", "request"]);
    expect(debug.lines[0]!.reqId).toBeTypeOf("string");
    expect(debug.lines[1]!.reqId).toBe(debug.lines[0]!.reqId);
  });

  test("a line at an enabled level carries the request id and is redacted, also from a child", async () => {
    const { app, lines } = await appLoggingAt("info");
    await app.inject({ url: "/loud" });
    await app.inject({ url: "/loud" });
    await app.close();
    expect(lines.map((l) => l.msg)).toEqual(["loud", "from a child", "loud", "from a child"]);
    expect(lines[0]).toMatchObject({
      level: 40,
      password: "[redacted]",
      nested: { authorization: "[redacted]" },
    });
    expect(lines[1]).toMatchObject({ level: 50, part: "inner", reqId: lines[0]!.reqId });
    expect(lines[2]!.reqId).not.toBe(lines[0]!.reqId);
    expect(JSON.stringify(lines)).not.toContain("hunter2");
  });

  test("a route's own level is obeyed", async () => {
    const { app, lines } = await appLoggingAt("info");
    await app.inject({ url: "/own-level" });
    await app.close();
    expect(lines.map((l) => l.msg)).toContain("the route's own level");
  });
});
