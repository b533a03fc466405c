// ESLint: the recommended JavaScript rules and typescript-eslint's type-aware recommended set, plus
// the few rules below. No formatting rules except max-len: Prettier formats (.prettierrc.json).
// Import cycles and the direction of imports between the layers of src/ are checked by
// test/architecture/layers.test.ts.
// Why these choices: adr/0015-lint-and-format.md.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  // .gitignore's build output and scratch folders (ESLint does not read .gitignore)
  { ignores: ["dist/", "build/", ".tmp/", "bench/out/"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // tsconfig.json's program; vitest.config.ts is outside it
        projectService: { allowDefaultProject: ["vitest.config.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      eqeqeq: ["error", "always", { null: "ignore" }],
      // Prettier wraps code at 140 but never splits strings or comments: long messages and comments are split by hand
      "max-len": ["error", { code: 160, ignoreUrls: true, ignoreRegExpLiterals: true }],
      // a leading underscore marks a parameter or binding as deliberately unused
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
      // `import { x, type Y }` as the code writes it; `typeof import("./m.js")` stays allowed next to the lazy import() it types
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports", disallowTypeAnnotations: false }],
      // a switch over a union without a default names every member (a new event type or error code is then a lint finding)
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      // passing a caught error on (`Promise.reject(error)`) is fine; inventing a non-Error reason is not
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true }],
    },
  },
  // plain JavaScript (the Electron-side runtime, the simulator, scripts) is not type-checked (checkJs is off)
  { files: ["**/*.js", "**/*.mjs"], extends: [tseslint.configs.disableTypeChecked] },
  // stdout of the CLI is the ACP connection: src/ writes diagnostics through its logger, never the console
  { files: ["src/**"], rules: { "no-console": "error" } },
  {
    // tests read untyped JSON off the wire and fake async interfaces: `any` and async without await are fine there
    files: ["test/**"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/require-await": "off",
    },
  },
);
