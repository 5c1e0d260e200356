// The linter `npm test` runs (docs/architecture.md, "The linter"): typescript-eslint's type-aware rules
// for promises, which the compiler does not check, and ESLint's own rule against updates that an
// await in between can lose. Only these rules: formatting and style are not its business.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    files: ['lambdas/**/*.ts', 'lib/**/*.ts', 'local/**/*.ts', 'ops/**/*.ts', 'web/**/*.ts'],
    ignores: ['**/*.generated.*', '**/*.d.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // The linted sources' own programs (tsconfig.lint.json, the settings page's): the tests, which
      // are not linted, are not type-checked a second time here.
      parserOptions: { project: ['./tsconfig.lint.json', './web/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      'require-atomic-updates': 'error',
    },
  },
);
