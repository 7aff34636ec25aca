// Team roles (numeric levels, as FlowFuse) and the platform administrator level.
import { z } from "zod";

export const Role = {
  dashboard: 5,
  viewer: 10,
  member: 30,
  owner: 50,
  /** Platform administrator: a user flag, never a team role. */
  admin: 99,
} as const;

export type RoleName = keyof typeof Role;

export const TeamRole = z
  .union([z.literal(5), z.literal(10), z.literal(30), z.literal(50)])
  .describe("Team role: 5 dashboard, 10 viewer, 30 member, 50 owner");
export type TeamRole = z.infer<typeof TeamRole>;

export function roleName(level: number): RoleName | undefined {
  return (Object.keys(Role) as RoleName[]).find((name) => Role[name] === level);
}
