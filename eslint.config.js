// Type-aware lint for every package. Strict tsc is the first gate; this adds the
// rules the compiler does not check (floating promises, misused promises).
import eslint from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", ".perdure/**", "**/.next/**", "**/next-env.d.ts"] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The root entry and the repository scripts (nine files today) are outside every package's project.
        projectService: { allowDefaultProject: ["perdure.agents.ts", "scripts/*.ts"], defaultProject: "tsconfig.base.json", maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 16 },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // node:test registers tests synchronously; the promises it returns need no handling.
      "@typescript-eslint/no-floating-promises": ["error", {
        allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["it", "describe", "test", "before", "after", "beforeEach", "afterEach"] }],
      }],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unnecessary-type-assertion": "off",
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
  // The Node version preflight is plain JavaScript that old Node versions parse; no tsconfig covers it.
  {
    files: ["packages/*/bin/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
