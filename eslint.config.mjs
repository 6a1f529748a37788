import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.js', '!bench/**/*.js', '**/*.mjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Sizes a reader can hold in mind (docs/architecture.md): tests and fixtures are exempt.
    files: ['services/**/*.ts', 'infra/**/*.ts', 'bench/**/*.js'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The benchmarks are CommonJS run by plain `node` (docs/decisions.md): `require` is their import,
    // and tsc checks their names (tsconfig.bench.json), as it does for the TypeScript files.
    files: ['bench/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-undef': 'off' },
  },
);
