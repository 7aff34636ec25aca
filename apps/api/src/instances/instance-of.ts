// What the instances' procedures share: their OpenAPI tag, and how they find what they act on —
// the instance (404 when there is none) and the runtime (503 when the platform runs no instances).
import { findProject, type ProjectDetail } from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import type { Context } from "../core/trpc";

export const TAG = "Instances";

export async function projectOf(ctx: Context, instanceId: string): Promise<ProjectDetail> {
  const project = await findProject(ctx.db, instanceId);
  if (!project) throw notFound();
  return project;
}

export function runtimeOf(ctx: Context) {
  if (!ctx.instances) {
    throw new ApiError(503, "runtime_unavailable", "This platform runs no instances (no driver)");
  }
  return ctx.instances;
}
