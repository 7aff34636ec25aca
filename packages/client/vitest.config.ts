export { default } from "@flowplane/vitest-config";
