declare const config: import("vitest/config").ViteUserConfig;
export default config;
