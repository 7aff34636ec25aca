// Applications: an application groups a team's hosted instances.
import { z } from "zod";
import { Id, Links, Name, Text, Timestamp } from "./common";
import { TeamSummary } from "./teams/teams";

const Description = Text.max(1024).nullable();

export const ApplicationSummary = z
  .object({ id: Id, name: z.string(), description: z.string().nullable(), links: Links })
  .meta({ id: "ApplicationSummary" });
export type ApplicationSummary = z.infer<typeof ApplicationSummary>;

export const Application = ApplicationSummary.extend({
  createdAt: Timestamp,
  updatedAt: Timestamp,
  team: TeamSummary,
}).meta({ id: "Application" });
export type Application = z.infer<typeof Application>;

export const ApplicationIdInput = z.strictObject({ applicationId: Id });

export const CreateApplicationInput = z.strictObject({
  name: Name,
  teamId: Id.describe("The team the application belongs to (owners)"),
  description: Description.optional(),
});

export const UpdateApplicationInput = z.strictObject({
  applicationId: Id,
  name: Name.optional(),
  description: Description.optional(),
});
