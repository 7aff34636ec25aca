// The platform area: what the platform itself tells clients (GET /settings).
import { settingsRouter } from "./procedures";

export const platform = {
  procedures: { settings: settingsRouter },
};
