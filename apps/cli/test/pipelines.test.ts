// `flowplane pipelines`: an owner builds a pipeline of two real hosted instances from the terminal,
// deploys the first stage with --wait (exit 0 once the operation succeeded), and is refused the
// last stage (exit 1 with the API's message).
import { beforeAll, describe, expect, it } from "vitest";
import { cell, type User } from "./cli";
import { adminApi, serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let teamId: string;
let applicationId: string;

const api = (method: string, path: string, body?: unknown) => adminApi(server, method, path, body);

serveWithAdmin((served) => ({ server, admin } = served), { instances: true });
beforeAll(async () => {
  const team = JSON.parse(
    (await admin.flowplane("teams", "create", "Lines", "--slug", "lines", "--json")).stdout,
  );
  teamId = team.id;
  applicationId = (await api("POST", "/api/v1/applications", { name: "Line", teamId })).id;
  for (const name of ["cli-dev", "cli-prod"]) {
    await api("POST", "/api/v1/projects", { name, applicationId });
  }
  // Both running before the pipeline deploys between them.
  for (;;) {
    const { applications } = await api("GET", `/api/v1/teams/${teamId}/applications`);
    const ids = applications[0].instances.map((i: { id: string }) => i.id);
    const states = await Promise.all(
      ids.map(async (id: string) => (await api("GET", `/api/v1/projects/${id}/status`)).meta.state),
    );
    if (states.every((state: string) => state === "running")) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 120_000);

describe("flowplane pipelines", { timeout: 120_000 }, () => {
  it("builds a pipeline, deploys a stage with --wait, and refuses the last stage", async () => {
    const created = await admin.flowplane(
      ...["pipelines", "create", "Release", "--application", applicationId, "--json"],
    );
    expect(created.status, created.stderr).toBe(0);
    const pipelineId = JSON.parse(created.stdout).id as string;
    const dev = await admin.flowplane(
      ...[
        "pipelines",
        "stages",
        "add",
        pipelineId,
        "Dev",
        "--instance",
        "cli-dev",
        "--team",
        "lines",
        "--json",
      ],
    );
    expect(dev.status, dev.stderr).toBe(0);
    const devId = JSON.parse(dev.stdout).id as string;
    const prod = await admin.flowplane(
      ...[
        "pipelines",
        "stages",
        "add",
        pipelineId,
        "Prod",
        "--instance",
        "cli-prod",
        "--after",
        devId,
      ],
      ...["--team", "lines", "--json"],
    );
    expect(prod.status, prod.stderr).toBe(0);
    const prodId = JSON.parse(prod.stdout).id as string;

    const listed = await admin.flowplane("pipelines", "list", "--team", "lines");
    expect(cell(listed.stdout, 1, "NAME")).toBe("Release");
    expect(listed.stdout).toContain("Dev → Prod");

    const deployed = await admin.flowplane("pipelines", "deploy", pipelineId, devId, "--wait");
    expect(deployed.status, deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/^Deployed .* from Dev to Prod\.\n$/);

    const last = await admin.flowplane("pipelines", "deploy", pipelineId, prodId, "--wait");
    expect(last.status).toBe(1);
    expect(last.stderr).toContain("Target stage not found (not_found)");

    const shown = await admin.flowplane("pipelines", "show", pipelineId);
    expect(shown.stdout).toMatch(/Dev +cli-dev +create_snapshot/);
    const deleted = await admin.flowplane("pipelines", "delete", pipelineId, "--yes");
    expect(deleted.stdout).toBe(`Deleted pipeline Release (id ${pipelineId}).\n`);
  });
});
