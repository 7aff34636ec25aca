// Importing flows and credentials into an instance (FlowFuse's POST /projects/{instanceId}/import):
// written onto its storage as a rollback writes a snapshot's, the credentials encrypted with the
// instance's own secret; a running instance restarts on them, and gets back what it had if it
// does not start.
import { isEncryptedCredentials } from "@flowplane/auth";
import {
  EncryptedCredentials,
  Flows,
  ImportInstanceFlowsInput,
  PlainCredentials,
  Status,
} from "@flowplane/contract";

import type { z } from "zod";
import { ApiError, invalidRequest } from "../core/errors";
import { actorOf, procedure } from "../core/trpc";
import {
  credentialSecretOf,
  encryptWith,
  openCredentials,
  writeOntoInstance,
  withCredentialSecret,
} from "./content";
import { recordInstanceSnapshotEvent } from "./events";
import { projectOf } from "./records";

/** A JSON text field, parsed and checked against its schema (400 naming the field). */
function parsedField<T>(text: string, field: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest(`Invalid request: ${field} is not JSON`, [
      { path: field, message: "Not JSON" },
    ]);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const fields = result.error.issues.map((issue) => ({
      path: [field, ...issue.path].join("."),
      message: issue.message,
    }));
    throw invalidRequest(`Invalid request: ${fields[0]!.path}: ${fields[0]!.message}`, fields);
  }
  return result.data;
}

const invalidSecret = () =>
  new ApiError(403, "invalid_credentials_secret", "incorrect credential secret", [
    { path: "credsSecret", message: "Does not decrypt the credentials" },
  ]);

/** The credentials in the clear: 403 when `credsSecret` does not open them, as FlowFuse's. */
function importedCredentials(text: string, secret: string | undefined): Record<string, unknown> {
  const given = parsedField(text, "credentials", EncryptedCredentials.or(PlainCredentials));
  if (isEncryptedCredentials(given) && secret === undefined) throw invalidSecret();
  try {
    return openCredentials(given, secret, "credsSecret");
  } catch (error) {
    if (error instanceof ApiError) throw invalidSecret();
    throw error;
  }
}

export const flowImportProcedures = {
  importFlows: procedure
    .meta({
      permission: "project:edit",
      errors: [409, 503],
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/import",
        tags: ["Instances"],
        summary: "Import flows and credentials into an instance (owners)",
        description:
          "`flows` (JSON text of Node-RED's array of nodes) replaces the instance's flows; `credentials` (JSON text: Node-RED's encrypted `{ \"$\": … }`, opened with `credsSecret`, or plain by node id) replaces its credentials, stored encrypted with the instance's own secret. Either may be left out. A running instance restarts on them (answered once done; if it does not start, it gets back what it had and the failure is answered). A `credsSecret` that does not open the credentials is 403 `invalid_credentials_secret`; text that is not JSON, or not flows or credentials, 400 naming the field. Audit `project.flow-imported`.",
      },
    })
    .input(ImportInstanceFlowsInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const flows =
        input.flows === undefined ? undefined : parsedField(input.flows, "flows", Flows);
      const credentials =
        input.credentials === undefined
          ? undefined
          : importedCredentials(input.credentials, input.credsSecret);
      await writeOntoInstance(
        ctx,
        project.id,
        (before) => {
          const runtimeSettings = withCredentialSecret(before.runtimeSettings);
          return {
            ...before,
            runtimeSettings,
            flows: flows ?? before.flows,
            credentials:
              credentials === undefined
                ? before.credentials
                : Object.keys(credentials).length === 0
                  ? {}
                  : encryptWith(credentialSecretOf(runtimeSettings), credentials),
          };
        },
        (trx) => recordInstanceSnapshotEvent(trx, "project.flow-imported", actorOf(ctx), project),
      );
      return { status: "okay" as const };
    }),
};
