// The pages of a person's account: sign-in and sign-out, their teams and the invitations they
// received (the front page), Profile, Security (personal access tokens) and the forced
// new-password page.
import type { EditorHosts } from "../../instances/index";
import type { PageRoutes } from "../../pages/page";
import type { SessionOptions } from "../sessions";
import { settingsPages } from "./settings";
import { signInPages } from "./sign-in";
import { teamsPages } from "./teams";

export function accountPages(options: {
  account: SessionOptions;
  /** The editors' hosts, where the sign-in and new-password forms may end (editor sign-in). */
  editorHosts: EditorHosts;
}): PageRoutes {
  return (app, deps) => {
    const own = { ...deps, ...options };
    signInPages(app, own);
    teamsPages(app, own);
    settingsPages(app, own);
  };
}
