// FlowFuse's search of a team through the real server: applications by name or description,
// instances by name, devices by name or type, each by its id too, in any case; LIKE's wildcards
// typed by a user match themselves; viewers and up (and administrators) search, another team's
// members get 404, a malformed team 400 `bad_request`.
import { Role } from "@flowplane/contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let owner: { id: string; token: string };
let viewer: { id: string; token: string };
let dashboard: { id: string; token: string };
let outsider: { id: string; token: string };
let teamId: string;
let otherTeamId: string;
const ids: Record<string, string> = {};

async function post(path: string, token: string, body: Record<string, unknown>) {
  const reply = await server.request("POST", path, { token, body });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  owner = await server.user();
  teamId = await post("/api/v1/teams", owner.token, { name: "Search team" });
  viewer = await server.user({ teams: [{ id: teamId, role: Role.viewer }] });
  dashboard = await server.user({ teams: [{ id: teamId, role: Role.dashboard }] });
  outsider = await server.user();
  otherTeamId = await post("/api/v1/teams", outsider.token, { name: "Other search team" });

  ids.plant = await post("/api/v1/applications", owner.token, {
    teamId,
    name: "Plant Floor",
    description: "Line sensors at 100% duty",
  });
  ids.office = await post("/api/v1/applications", owner.token, {
    teamId,
    name: "Office_Tools",
  });
  ids.lineDev = await post("/api/v1/projects", owner.token, {
    name: "line-dev",
    applicationId: ids.plant,
  });
  ids.officeBot = await post("/api/v1/projects", owner.token, {
    name: "office-bot",
    applicationId: ids.office,
  });
  ids.press = await post("/api/v1/devices", owner.token, {
    team: teamId,
    name: "Press LINE 4",
    type: "raspberry",
  });
  ids.gateway = await post("/api/v1/devices", owner.token, {
    team: teamId,
    name: "Gateway",
    type: "Line-Controller",
  });
  // The other team's things of the same names are never found.
  const theirs = await post("/api/v1/applications", outsider.token, {
    teamId: otherTeamId,
    name: "Line elsewhere",
  });
  await post("/api/v1/projects", outsider.token, { name: "line-theirs", applicationId: theirs });
  await post("/api/v1/devices", outsider.token, { team: otherTeamId, name: "line device" });
});
afterAll(() => server?.close());

const search = (query: string, token: string | undefined = viewer.token, path = "/api/v1/search") =>
  server.request("GET", `${path}?${query}`, { token });

const found = (body: { results: { object: string; id: string }[] }) =>
  body.results.map((r) => `${r.object}:${r.id}`);

describe("GET /api/v1/search", () => {
  it("finds the team's applications, instances and devices in any case, in that order", async () => {
    const reply = await search(`team=${teamId}&query=LiNe`);
    expect(reply.status, reply.text).toBe(200);
    // Plant Floor by its description, line-dev by name, both devices by name or type.
    expect(found(reply.body)).toEqual([
      `application:${ids.plant}`,
      `instance:${ids.lineDev}`,
      `device:${ids.gateway}`,
      `device:${ids.press}`,
    ]);
    expect(reply.body.count).toBe(4);
    const [application, instance, device] = reply.body.results;
    expect(application).toMatchObject({
      object: "application",
      name: "Plant Floor",
      description: "Line sensors at 100% duty",
      links: { self: expect.stringContaining(ids.plant!) },
    });
    expect(instance).toMatchObject({ object: "instance", name: "line-dev" });
    expect(device).toMatchObject({ object: "device", name: "Gateway", type: "Line-Controller" });
  });

  it("finds each by its id", async () => {
    for (const [key, object] of [
      ["office", "application"],
      ["officeBot", "instance"],
      ["press", "device"],
    ] as const) {
      const reply = await search(`team=${teamId}&query=${ids[key]}`);
      expect(found(reply.body), key).toEqual([`${object}:${ids[key]}`]);
    }
  });

  it("matches % and _ as themselves, not as wildcards", async () => {
    const percent = await search(`team=${teamId}&query=${encodeURIComponent("100%")}`);
    expect(found(percent.body)).toEqual([`application:${ids.plant}`]);
    const lone = await search(`team=${teamId}&query=${encodeURIComponent("%")}`);
    expect(found(lone.body)).toEqual([`application:${ids.plant}`]);
    const underscore = await search(`team=${teamId}&query=${encodeURIComponent("e_T")}`);
    expect(found(underscore.body)).toEqual([`application:${ids.office}`]);
    // `_` would match the `-` of office-bot and line-dev as a wildcard.
    const wildcard = await search(`team=${teamId}&query=${encodeURIComponent("e_b")}`);
    expect(wildcard.body).toEqual({ count: 0, results: [] });
    const quote = await search(`team=${teamId}&query=${encodeURIComponent("'; drop table")}`);
    expect(quote.body).toEqual({ count: 0, results: [] });
  });

  it("finds nothing for a blank or absent query", async () => {
    for (const query of [
      `team=${teamId}`,
      `team=${teamId}&query=`,
      `team=${teamId}&query=%20%20`,
    ]) {
      const reply = await search(query);
      expect(reply.status, query).toBe(200);
      expect(reply.body).toEqual({ count: 0, results: [] });
    }
  });

  it("is for viewers and up and administrators; another team's is 404, a bad team 400", async () => {
    expect((await search(`team=${teamId}&query=line`, owner.token)).body.count).toBe(4);
    // The platform's administrator, in no team.
    expect((await search(`team=${teamId}&query=line`, undefined)).body.count).toBe(4);
    const low = await search(`team=${teamId}&query=line`, dashboard.token);
    expect(low.status).toBe(403);
    const foreign = await search(`team=${teamId}&query=line`, outsider.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    const unknown = await search(`team=nosuchteam000&query=line`, viewer.token);
    expect(unknown.status).toBe(404);
    for (const query of ["team=not%20an%20id&query=line", "query=line"]) {
      const bad = await search(query);
      expect(bad.status, query).toBe(400);
      expect(bad.body.code, query).toBe("bad_request");
      expect(bad.body.errors, query).toEqual([{ path: "team", message: expect.any(String) }]);
    }
    // The other team's own search finds only its own.
    const theirs = await search(`team=${otherTeamId}&query=line`, outsider.token);
    expect(theirs.body.count).toBe(3);
    expect(found(theirs.body)).not.toContain(`instance:${ids.lineDev}`);
  });
});

describe("GET /api/v1/search/instances", () => {
  it("finds hosted instances with their state, then devices", async () => {
    const reply = await search(
      `team=${teamId}&query=line`,
      viewer.token,
      "/api/v1/search/instances",
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.count).toBe(3);
    expect(reply.body.results.map((r: { id: string }) => r.id)).toEqual([
      ids.lineDev,
      ids.gateway,
      ids.press,
    ]);
    expect(reply.body.results[0]).toMatchObject({
      name: "line-dev",
      instanceType: "hosted",
      meta: { state: expect.any(String) },
    });
    expect(reply.body.results[1]).toMatchObject({ name: "Gateway", instanceType: "remote" });
    const foreign = await search(
      `team=${teamId}&query=line`,
      outsider.token,
      "/api/v1/search/instances",
    );
    expect(foreign.status).toBe(404);
    const bad = await search("team=&query=line", viewer.token, "/api/v1/search/instances");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("bad_request");
  });
});
