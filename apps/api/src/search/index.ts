// The search area: FlowFuse's search of a team's applications, instances and devices, and the
// pages FlowFuse's own page paths (a user's bookmarks) lead to.
import type { Area } from "../plugins/area";
import { bookmarkPages } from "./pages/bookmarks";
import { searchRouter } from "./procedures";

export const search = {
  procedures: { search: searchRouter },
  pages: () => bookmarkPages,
} satisfies Area;
