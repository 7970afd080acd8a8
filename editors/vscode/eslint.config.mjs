// Type-aware linting of the extension's TypeScript; plain linting of the build script and the
// test extension (JavaScript run by Node).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["out/", "dist/", "build/", "node_modules/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test's describe/it return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it"] }] },
      ],
      "@typescript-eslint/explicit-function-return-type": ["error", { allowExpressions: true }],
      eqeqeq: "error",
    },
  },
  {
    files: ["scripts/**/*.mjs", "e2e/**/*.js"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: { process: "readonly", require: "readonly", exports: "writable", setTimeout: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off", "@typescript-eslint/explicit-function-return-type": "off" },
  },
);
