// One lint configuration for the whole workspace: typescript-eslint's recommended type-aware rules over every
// TypeScript file, each checked against the tsconfig of the package it belongs to. Import cycles are found by
// madge (`npm run lint:cycles`, part of `npm run lint`): import-x's no-cycle would walk every import again per file.
// The project's own rules (eslint-rules/onsale.js) keep SQL in repositories and each domain behind its service.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import onsale from './eslint-rules/onsale.js';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      '**/dist/',
      '.data/',
      '.test-results/',
      'bench-results/',
      'coverage/',
      'apps/console/src/routeTree.gen.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked against the nearest tsconfig.json that holds it; the edge's tests are in none (its
        // tsconfig.json is the worker's) and use its tsconfig.node.json, as does the edge-guard bench's process script.
        projectService: {
          allowDefaultProject: ['apps/edge/test/*.ts', 'apps/edge/bench/pipe-relay.ts'],
          defaultProject: 'apps/edge/tsconfig.node.json',
          // The edge's test files and the relay script (seventeen files, one default project): above the default cap of 8.
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 24,
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Fastify plugins, route modules and interface implementations are async by contract, awaited or not.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a value kept on purpose (an omitted rest property, an unused parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/only-throw-error': [
        'error',
        // TanStack Router's loaders signal a redirect or a missing page by throwing its redirect() / notFound().
        { allow: [{ from: 'package', package: '@tanstack/router-core', name: ['Redirect', 'NotFoundError'] }] },
      ],
      // React event handlers may be async: the handlers catch and show their own errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
    },
  },
  {
    // Migrations take `Kysely<any>`: they must not depend on the app's table types, which change after them.
    files: ['packages/shared/src/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests and benchmarks read HTTP and JSON answers as `any` and check their shape with assertions.
    files: ['**/*.test.ts', '**/test/**/*.ts', '**/bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // SQL only in *.repository.ts files (and migrations): the product's code, not its tests, benchmarks or scripts.
    files: ['packages/shared/src/**/*.ts', 'apps/*/src/**/*.{ts,tsx}'],
    ignores: [
      '**/*.repository.ts',
      '**/*.test.ts',
      'packages/shared/src/db/migrations/**',
      // The database layer itself (connecting, migrating, fault handling, the statistics keeper's ANALYZE): no domain's
      // rows, only the database's own.
      'packages/shared/src/db/**',
      // Test helpers (what tests set up), built like tests.
      'packages/shared/src/testing/**',
      // The commit-mode fragment a hold's statement embeds, and the `SET LOCAL` for a release's transaction: one
      // setting, shared by every repository that writes holds, not a query.
      'packages/shared/src/inventory/hold-commit.ts',
    ],
    plugins: { onsale },
    rules: { 'onsale/sql-in-repositories': 'error' },
  },
  {
    // A domain (a folder of packages/shared/src) uses another through its index or service, never its repository or
    // tables. Not the database layer (db/database.ts is every table's type) nor test helpers.
    files: ['packages/shared/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/shared/src/db/**', 'packages/shared/src/testing/**'],
    plugins: { onsale },
    rules: { 'onsale/domain-borders': 'error' },
  },
  {
    // The domain folders form layers: no two import each other, directly or through others (docs/architecture.md,
    // "The layers"). The database layer (db/database.ts names every table) and the test helpers are not domains.
    files: ['packages/shared/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.bench.ts'],
    plugins: { onsale },
    rules: {
      // No loop is allowed: a known one still to break would be named here as `allow: ['from -> to']`, with why.
      'onsale/domain-layers': ['error', { outside: ['db', 'testing'] }],
    },
  },
);
