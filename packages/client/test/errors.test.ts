// Errors read as the contract's codes, from tRPC's client error or a REST envelope.
import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { envelopeError, FlowplaneClientError, flowplaneError } from "../src/index";

describe("flowplaneError", () => {
  it("reads a procedure's error by its data", () => {
    const thrown = new TRPCClientError("Team not found", {
      result: {
        error: {
          code: -32004,
          message: "Team not found",
          data: { code: "not_found", httpStatus: 404, requestId: "req-1", errors: undefined },
        },
      },
    });
    const error = flowplaneError(thrown);
    expect(error).toBeInstanceOf(FlowplaneClientError);
    expect(error).toMatchObject({
      code: "not_found",
      status: 404,
      requestId: "req-1",
      message: "Team not found",
    });
    expect(error?.cause).toBe(thrown);
  });

  it("reads a refusal before tRPC runs by the REST envelope", () => {
    const thrown = new TRPCClientError("payload too large", {
      meta: {
        response: new Response(null, { status: 413 }),
        responseJSON: { code: "payload_too_large", error: "Body too large", requestId: "r" },
      },
    });
    expect(flowplaneError(thrown)).toMatchObject({
      code: "payload_too_large",
      status: 413,
      message: "Body too large",
    });
  });

  it("is undefined for anything that is not the API's error", () => {
    expect(flowplaneError(new Error("fetch failed"))).toBeUndefined();
    expect(flowplaneError(new TRPCClientError("no answer"))).toBeUndefined();
    expect(envelopeError({ message: "Bad Request" }, 400)).toBeUndefined();
    expect(envelopeError({ code: 400, error: "Bad Request" }, 400)).toBeUndefined();
  });
});
