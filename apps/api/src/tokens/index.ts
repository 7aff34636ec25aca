// The tokens area: personal access tokens (the caller's, and administrators' for any user).
import { tokenRouter } from "./procedures";

export const tokens = {
  procedures: { token: tokenRouter },
};
export { tokenRouter } from "./procedures";
