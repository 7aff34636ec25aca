// The search area: FlowFuse's search of a team's applications, instances and devices.
import { searchRouter } from "./procedures";

export const search = {
  procedures: { search: searchRouter },
};
