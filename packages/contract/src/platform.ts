// What the platform tells its clients about itself (GET /settings).
import { z } from "zod";

export const Settings = z
  .object({
    version: z.string().describe("The platform's version"),
    base_url: z.string().describe("The platform's public URL"),
    "team:create": z.boolean().describe("Whether the caller may create teams"),
    "team:broker:host": z
      .string()
      .optional()
      .describe("The team broker's host name (absent when the platform runs none)"),
    "team:broker:url": z
      .string()
      .optional()
      .describe("Flowplane's: the team broker's URL, e.g. `mqtt://127.0.0.1:1883`"),
  })
  .catchall(z.unknown())
  .meta({ id: "Settings" });
export type Settings = z.infer<typeof Settings>;
