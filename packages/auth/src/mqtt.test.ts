import { describe, expect, it } from "vitest";
import {
  aclAllows,
  brokerUsernameProblem,
  connectIdentity,
  filterCovers,
  mountFor,
  parseBrokerUsername,
  topicFilterProblem,
  topicMatches,
} from "./mqtt";

describe("topic filters", () => {
  it.each(["a", "a/b", "+", "#", "a/+/c", "a/#", "+/+/#", "a//b", "/a"])("accepts %s", (f) =>
    expect(topicFilterProblem(f)).toBeUndefined(),
  );
  it.each(["", "a/#/b", "a#", "a/b+", "#/a", "$SYS/#", "$share/x/y", "a\u0000b", "x".repeat(1025)])(
    "refuses %j",
    (f) => expect(topicFilterProblem(f)).toBeTypeOf("string"),
  );

  it("matches topics as MQTT 3.1.1 says", () => {
    expect(topicMatches("a/+/c", "a/b/c")).toBe(true);
    expect(topicMatches("a/+/c", "a/b/d")).toBe(false);
    expect(topicMatches("a/#", "a")).toBe(true);
    expect(topicMatches("a/#", "a/b/c")).toBe(true);
    expect(topicMatches("a/+", "a/b/c")).toBe(false);
    expect(topicMatches("+", "a")).toBe(true);
    expect(topicMatches("a/b", "a/b/c")).toBe(false);
  });

  it("knows when one filter covers another", () => {
    expect(filterCovers("sensors/#", "sensors/+/temp")).toBe(true);
    expect(filterCovers("sensors/#", "sensors/#")).toBe(true);
    expect(filterCovers("#", "a/+/#")).toBe(true);
    expect(filterCovers("sensors/+", "sensors/#")).toBe(false);
    expect(filterCovers("sensors/+", "sensors/+")).toBe(true);
    expect(filterCovers("sensors/a", "sensors/+")).toBe(false);
    expect(filterCovers("a/+/c", "a/b/c")).toBe(true);
    expect(filterCovers("a/b", "a/b/c")).toBe(false);
  });
});

describe("the ACL decision", () => {
  const acls = [
    { action: "publish" as const, pattern: "sensors/#" },
    { action: "subscribe" as const, pattern: "commands/#" },
    { action: "both" as const, pattern: "shared/+" },
  ];
  it("allows what an ACL names for its action, and both for both", () => {
    expect(aclAllows(acls, "publish", "sensors/t1")).toBe(true);
    expect(aclAllows(acls, "subscribe", "sensors/#")).toBe(false);
    expect(aclAllows(acls, "subscribe", "commands/#")).toBe(true);
    expect(aclAllows(acls, "publish", "commands/x")).toBe(false);
    expect(aclAllows(acls, "publish", "shared/a")).toBe(true);
    expect(aclAllows(acls, "subscribe", "shared/+")).toBe(true);
    expect(aclAllows(acls, "subscribe", "shared/#")).toBe(false);
  });
  it("never allows the broker's own topics", () => {
    const all = [{ action: "both" as const, pattern: "#" }];
    expect(aclAllows(all, "subscribe", "$SYS/#")).toBe(false);
    expect(aclAllows(all, "publish", "$SYS/x")).toBe(false);
    expect(aclAllows(all, "subscribe", "#")).toBe(true);
  });
  it("refuses malformed topics whatever the ACLs", () => {
    const all = [{ action: "both" as const, pattern: "#" }];
    expect(aclAllows(all, "publish", "a/+")).toBe(false);
    expect(aclAllows(all, "subscribe", "a/#/b")).toBe(false);
  });
});

describe("identity", () => {
  it("reads <username>@<teamId>", () => {
    expect(parseBrokerUsername("alice@Team1234abcd")).toEqual({
      username: "alice",
      teamId: "Team1234abcd",
    });
    expect(parseBrokerUsername("alice")).toBeUndefined();
    expect(parseBrokerUsername("a@b@c")).toBeUndefined();
    expect(parseBrokerUsername("@team")).toBeUndefined();
    expect(parseBrokerUsername("alice@")).toBeUndefined();
    expect(parseBrokerUsername("in:x@team")).toBeUndefined();
  });
  it("needs the client id to be the username, and a password", () => {
    expect(connectIdentity("a@t", "a@t", "pw")).toEqual({ username: "a", teamId: "t" });
    expect(connectIdentity("a@t", "other", "pw")).toBeUndefined();
    expect(connectIdentity("a@t", "a@t", undefined)).toBeUndefined();
    expect(connectIdentity("a@t", "a@t", "")).toBeUndefined();
    expect(connectIdentity("a@t", "a@t", "x".repeat(129))).toBeUndefined();
    expect(connectIdentity(undefined, "a@t", "pw")).toBeUndefined();
  });
  it("validates bare usernames", () => {
    expect(brokerUsernameProblem("sensor-1.a_b")).toBeUndefined();
    expect(brokerUsernameProblem("a@b")).toBeTypeOf("string");
    expect(brokerUsernameProblem("instance:x")).toBeTypeOf("string");
    expect(brokerUsernameProblem("")).toBeTypeOf("string");
  });
  it("mounts a team's topics under its own prefix", () => {
    expect(mountFor("T1")).toBe("ff/v1/T1/c/");
  });
});
