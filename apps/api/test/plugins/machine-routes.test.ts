// The routes machines call (a hosted Node-RED's /storage/, the team library's /storage/library/, a
// device agent's live routes and audit events, an external broker's callbacks) decide who calls
// before they read a body: a caller without the right token is answered at once, while its body
// is still unsent, so that nobody can make the platform buffer and parse large bodies (issue 32:
// ten unauthenticated 20 MiB posts to /storage/<id>/flows exhausted the heap).
import { generateToken } from "@flowplane/auth";
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ broker: "embedded" });
});
afterAll(() => server?.close());

/**
 * A POST that announces `announced` bytes of JSON but sends only the first 64 KiB of them, and
 * waits for the answer: it can only come before the body is read. A server that reads the body
 * first never answers (the test times out).
 */
function answerBeforeBody(path: string, authorization: string | undefined, announced: number) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const url = new URL(path, server.url);
    const req = httpRequest(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(announced),
        ...(authorization !== undefined && { authorization }),
      },
    });
    req.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString();
        resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on("error", reject);
    req.write(`[${"0,".repeat(32 * 1024)}`);
  });
}

const MiB = 1024 * 1024;

describe(
  "machine routes answer a caller without their token before reading its body",
  { timeout: 15_000 },
  () => {
    test("POST /storage/<id>/flows with an unknown instance token: 401 before a 20 MiB body is sent", async () => {
      const reply = await answerBeforeBody(
        `/storage/${randomUUID()}/flows`,
        `Bearer ${generateToken("instance")}`,
        20 * MiB,
      );
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        code: "unauthorized",
        error: "unauthorized",
        requestId: expect.any(String),
      });
    });

    test("an instance's library and settings, with no token or a person's: 401 before the body", async () => {
      const person = await server.user();
      for (const [path, authorization] of [
        [`/storage/${randomUUID()}/library/functions`, undefined],
        [`/storage/${randomUUID()}/settings`, `Bearer ${person.token}`],
      ] as const) {
        const reply = await answerBeforeBody(path, authorization, 20 * MiB);
        expect(reply.status, path).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
    });

    test("the team library's POST /storage/library/<team>/…, unauthenticated: 404 before the body", async () => {
      const reply = await answerBeforeBody(
        `/storage/library/${randomUUID()}/flows/a`,
        `Bearer ${generateToken("instance")}`,
        20 * MiB,
      );
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe("not_found");
    });

    test("a device's check-in and audit events without a device token: 401 before the body", async () => {
      const person = await server.user();
      for (const path of [
        `/api/v1/devices/${randomUUID()}/live/state`,
        `/logging/device/${randomUUID()}/audit`,
      ]) {
        const reply = await answerBeforeBody(path, `Bearer ${person.token}`, 512 * 1024);
        expect(reply.status, path).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
      // An unknown device's token for the audit events: looked up before the body too.
      const unknown = await answerBeforeBody(
        `/logging/device/${randomUUID()}/audit`,
        `Bearer ${generateToken("device")}`,
        512 * 1024,
      );
      expect(unknown.status).toBe(401);
    });

    test("the broker's callbacks without a broker token: 401 before the body", async () => {
      for (const authorization of [undefined, `Bearer ${generateToken("broker")}`]) {
        const reply = await answerBeforeBody("/api/comms/v2/auth", authorization, 512 * 1024);
        expect(reply.status).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
    });
  },
);
