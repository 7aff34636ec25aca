// Snapshots as a command line names them (rule.ts): by id or name among an instance's, a
// device's or an application's.
import type { Client } from "../client";
import { when } from "../output";
import { listEvery, type Named, pick, type Ref } from "./rule";

type SnapshotScope = { instance: Ref } | { device: Ref } | { application: Ref };

/** The snapshot named by id or name among an instance's, a device's or an application's. */
export async function resolveSnapshot(
  client: Client,
  scope: SnapshotScope,
  given: string,
): Promise<Named> {
  const [owner, list] =
    "instance" in scope
      ? [
          `of instance ${scope.instance.name}`,
          (cursor?: string) =>
            client.snapshots.ofInstance.query({ instanceId: scope.instance.id, cursor }),
        ]
      : "device" in scope
        ? [
            `of device ${scope.device.name}`,
            (cursor?: string) =>
              client.snapshots.ofDevice.query({ deviceId: scope.device.id, cursor }),
          ]
        : [
            `of application ${scope.application.name}`,
            (cursor?: string) =>
              client.snapshots.ofApplication.query({
                applicationId: scope.application.id,
                cursor,
              }),
          ];
  const snapshots = await listEvery("snapshots", (cursor) => list(cursor));
  return pick({
    kind: "snapshot",
    given,
    scope: owner,
    candidates: snapshots.map((s) => ({
      id: s.id,
      name: s.name,
      where: `taken ${when(s.createdAt)}${s.project ? ` of instance ${s.project.name}` : ""}${s.device ? ` of device ${s.device.name}` : ""}`,
    })),
  });
}
