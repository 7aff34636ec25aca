// The search area: FlowFuse's search of a team's applications, instances and devices.
import type { Area } from "../plugins/area";
import { searchRouter } from "./procedures";

export const search = {
  procedures: { search: searchRouter },
} satisfies Area;
