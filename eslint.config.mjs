import js from '@eslint/js';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

const SIZE_LIMITS = {
  'max-lines': ['error', { max: 400 }],
  'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
};

/** `describe(...)`, `describe.only(...)`, `describe.each(table)(...)`: a call that only groups tests. */
function isDescribeCall(node) {
  if (node?.type !== 'CallExpression') return false;
  const callee = node.callee.type === 'CallExpression' ? node.callee.callee : node.callee;
  const base = callee.type === 'MemberExpression' ? callee.object : callee;
  return base.type === 'Identifier' && base.name === 'describe';
}

// max-lines-per-function for test code, except the body of a describe block: it only groups tests,
// and each test and helper inside it is still held to the limit.
const maxLinesPerFunction = builtinRules.get('max-lines-per-function');
const maxLinesPerTestFunction = {
  meta: maxLinesPerFunction.meta,
  create(context) {
    const listeners = maxLinesPerFunction.create(context);
    return Object.fromEntries(
      Object.entries(listeners).map(([selector, listener]) => [
        selector,
        (node) => {
          if (!(isDescribeCall(node.parent) && node.parent.arguments.includes(node))) listener(node);
        },
      ]),
    );
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
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
    // Sizes a reader can hold in mind (docs/architecture.md).
    files: ['services/**/*.ts', 'infra/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: SIZE_LIMITS,
  },
  {
    // The same sizes for tests and their helpers; a describe block's body is only a group of tests.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    plugins: { forewarn: { rules: { 'max-lines-per-test-function': maxLinesPerTestFunction } } },
    rules: {
      'max-lines': SIZE_LIMITS['max-lines'],
      'forewarn/max-lines-per-test-function': SIZE_LIMITS['max-lines-per-function'],
    },
  },
);
