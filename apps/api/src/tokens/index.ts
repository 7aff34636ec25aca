// The tokens area: personal access tokens (the caller's, and administrators' for any user).
import { deleteExpiredTokens } from "@flowplane/db";
import type { Area } from "../plugins/area";
import { tokenRouter } from "./procedures";

export const tokens = {
  procedures: { token: tokenRouter },
  async sweep({ db }, log) {
    const expired = await deleteExpiredTokens(db);
    if (expired.length > 0) log.info({ count: expired.length }, "deleted expired tokens");
  },
} satisfies Area;
export { tokenRouter } from "./procedures";
