// Test fixtures for scopes and callers.
import type { Caller, TokenScope } from "./permissions";

export const scope = (over: Partial<TokenScope> = {}): TokenScope => ({
  readOnly: false,
  adminOptIn: false,
  teamIds: null,
  expiresAt: null,
  ...over,
});

export const caller = (over: Partial<Caller> = {}, s: Partial<TokenScope> = {}): Caller => ({
  userId: "u",
  admin: false,
  scope: scope(s),
  ...over,
});
