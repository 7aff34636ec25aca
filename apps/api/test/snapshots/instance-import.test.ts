// Importing flows and credentials into an instance (POST /projects/{instanceId}/import): what is
// stored is what its Node-RED reads after a restart (its flows, its credentials under its own
// secret), a wrong secret is FlowFuse's 403, and bad input changes nothing.
import { decryptCredentials, encryptCredentials } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { afterAll, describe, expect, test } from "vitest";
import { createInstance, createTeam, makeUser } from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, teamId } = await serverWithTeam();
const instanceId = await createInstance(server, owner, teamId);

const FLOWS = [
  { id: "tab1", type: "tab", label: "Imported" },
  { id: "mqtt1", type: "mqtt-broker", broker: "localhost" },
];
const CREDENTIALS = { mqtt1: { user: "u", password: "imported-password" } };
const EXPORT_SECRET = "the exporting instance's secret";

afterAll(() => server.close());

const importInto = (body: unknown, token = owner.token, id = instanceId) =>
  server.request("POST", `/api/v1/projects/${id}/import`, { token, body });

/** What the instance's Node-RED reads from its storage: flows, and credentials opened with its secret. */
async function stored(id = instanceId) {
  const row = await server.db
    .selectFrom("project_storage")
    .select(["flows", "credentials", "settings"])
    .where("project_id", "=", id)
    .executeTakeFirstOrThrow();
  const secret = (row.settings as { _credentialSecret?: string })._credentialSecret;
  const credentials = row.credentials as { $?: string };
  return {
    flows: row.flows,
    credentials:
      credentials.$ === undefined ? credentials : decryptCredentials(secret!, { $: credentials.$ }),
  };
}

describe("importing", () => {
  test("encrypted credentials with their secret: the instance gets the flows and the credentials under its own secret, restarts, and logs it", async () => {
    const reply = await importInto({
      flows: JSON.stringify(FLOWS),
      credentials: JSON.stringify(encryptCredentials(EXPORT_SECRET, CREDENTIALS)),
      credsSecret: EXPORT_SECRET,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await stored()).toEqual({ flows: FLOWS, credentials: CREDENTIALS });
    const row = await server.db
      .selectFrom("project_storage")
      .select("credentials")
      .where("project_id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row.credentials)).not.toContain("imported-password");

    const status = await server.request("GET", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
    });
    expect(status.body.meta.state).toBe("running");
    const log = await server.request(
      "GET",
      `/api/v1/projects/${instanceId}/audit-log?event=project.flow-imported`,
      { token: owner.token },
    );
    expect(log.body.log).toHaveLength(1);
    expect(log.body.log[0].trigger.id).toBe(owner.id);
  });

  test("flows alone leave the credentials; plain credentials need no secret", async () => {
    const flows = [{ id: "tab2", type: "tab", label: "Second" }];
    expect((await importInto({ flows: JSON.stringify(flows) })).status).toBe(200);
    expect(await stored()).toEqual({ flows, credentials: CREDENTIALS });
    const plain = { mqtt1: { user: "v", password: "plain" } };
    expect((await importInto({ credentials: JSON.stringify(plain) })).status).toBe(200);
    expect(await stored()).toEqual({ flows, credentials: plain });
  });
});

describe("refusals change nothing", () => {
  test("a secret that does not open the credentials, or none, is 403 invalid_credentials_secret", async () => {
    const before = await stored();
    const credentials = JSON.stringify(encryptCredentials(EXPORT_SECRET, CREDENTIALS));
    for (const body of [
      { flows: "[]", credentials, credsSecret: "not the secret" },
      { flows: "[]", credentials },
    ]) {
      const reply = await importInto(body);
      expect(reply.status, reply.text).toBe(403);
      expect(reply.body.code).toBe("invalid_credentials_secret");
    }
    expect(await stored()).toEqual(before);
  });

  test("text that is not JSON, or not flows, is 400 naming the field; unknown fields 400", async () => {
    const before = await stored();
    for (const [body, field] of [
      [{ flows: "{not json" }, "flows"],
      [{ flows: JSON.stringify({ not: "an array" }) }, "flows"],
      [{ credentials: "[1]" }, "credentials"],
      [{ flows: "[]", extra: true }, "extra"],
    ] as const) {
      const reply = await importInto(body);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(reply.body.errors.map((e: { path: string }) => e.path.split(".")[0])).toContain(field);
    }
    expect(await stored()).toEqual(before);
  });

  test("members are 403, another team's owner 404", async () => {
    const member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
    expect((await importInto({ flows: "[]" }, member.token)).status).toBe(403);
    const stranger = await makeUser(server);
    await createTeam(server, stranger);
    expect((await importInto({ flows: "[]" }, stranger.token)).status).toBe(404);
  });
});
