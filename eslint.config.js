// @ts-check
/**
 * ESLint (flat config) with typescript-eslint's type-aware rules: the checks the formatter and
 * the compiler cannot make — promises that nobody awaits, switches over unions that miss a
 * case, type-only imports written as such, unused code. Formatting is Prettier's
 * (.prettierrc.json), layering dependency-cruiser's (.dependency-cruiser.cjs). Run by
 * `npm run lint`, part of `npm test`.
 *
 * The `no-unsafe-*` family is off: tests read JSON bodies as `any` on purpose, and src keeps
 * `unknown` at its edges (request bodies, JSON columns), which the compiler already polices.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'test/fixtures/**', 'web/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Interface implementations return promises without awaiting anything: not a defect.
      '@typescript-eslint/require-await': 'off',
      // Messages interpolate unknown values on purpose (String(x) of request input).
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // Kysely's expression builder and the test CLI helpers are destructured by design; their
      // methods use no `this`.
      '@typescript-eslint/unbound-method': 'off',
      // Input validation matches control characters on purpose (to refuse them).
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { process: 'readonly', console: 'readonly' } },
  },
);
