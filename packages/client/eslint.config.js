export { default } from "@flowplane/eslint-config";
