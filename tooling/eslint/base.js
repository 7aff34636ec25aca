// Lint rules shared by every package: typescript-eslint's recommended set, plus the project's own
// conventions (configuration is read in one env.ts; no stray console in library code).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/.turbo/**", "**/node_modules/**", "**/coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message: "Read configuration in env.ts only: it parses and validates every variable.",
        },
      ],
    },
  },
  {
    // Tests poke at untyped JSON (documents, replies).
    files: ["**/test/**", "**/*.test.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["**/env.ts", "**/env.js", "**/*.config.ts", "**/*.config.js"],
    rules: { "no-restricted-properties": "off" },
  },
);
