// What other packages may import: the router type for typed tRPC clients, and the server itself.
export type { AppRouter } from "./router";
export { buildApp, createLogger, type AppOptions } from "./app";
export { acceptInstanceConnection } from "./instances/index";
export {
  BASE_URL_FILE,
  ensureInitialAdmin,
  recordBaseUrl,
  loadTokenSecret,
  INITIAL_PASSWORD_FILE,
  INITIAL_TOKEN_FILE,
} from "./bootstrap";
export { loadConfig, type Config } from "./env";
