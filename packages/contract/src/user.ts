import { z } from "zod";
import { Id, Links, Timestamp } from "./common";

export const User = z
  .object({
    id: Id,
    username: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    admin: z.boolean().describe("Platform administrator"),
    createdAt: Timestamp,
    links: Links,
  })
  .meta({ id: "User" });
export type User = z.infer<typeof User>;
