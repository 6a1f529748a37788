import js from '@eslint/js';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

// `no-explicit-any` for the JavaScript checked through JSDoc (bench/): a type in a JSDoc tag may
// not be `any` or `*`; name the type, or take `unknown` and narrow it.
const jsdocTypeTag = /@(?:type|param|returns?|typedef|property|prop|template|satisfies)\s*\{/g;
const noJsdocAny = {
  meta: { type: 'problem', schema: [], messages: { any: 'JSDoc type `{{type}}` holds `any` or `*`' } },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          if (comment.type !== 'Block' || !comment.value.startsWith('*')) continue;
          const text = comment.value.replace(/^\s*\*/gm, ' ');
          for (const tag of text.matchAll(jsdocTypeTag)) {
            const type = balancedBraces(text, tag.index + tag[0].length - 1);
            if (/\bany\b|(?<![\w)\]>])\*|\*(?![\w(])/.test(type))
              context.report({ loc: comment.loc, messageId: 'any', data: { type } });
          }
        }
      },
    };
  },
};

/** The text from the `{` at `start` to its matching `}`. */
function balancedBraces(text, start) {
  let depth = 0;
  for (let position = start; position < text.length; position++) {
    if (text[position] === '{') depth++;
    else if (text[position] === '}' && --depth === 0) return text.slice(start, position + 1);
  }
  return text.slice(start);
}

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

/** The project's own rules (one plugin object: flat config refuses two plugins of the same name). */
const forewarnPlugin = {
  rules: { 'no-jsdoc-any': noJsdocAny, 'max-lines-per-test-function': maxLinesPerTestFunction },
};

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
    // Sizes a reader can hold in mind (docs/architecture.md).
    files: ['services/**/*.ts', 'infra/**/*.ts', 'bench/**/*.js'],
    ignores: ['**/*.test.ts'],
    rules: SIZE_LIMITS,
  },
  {
    // The same sizes for tests and their helpers; a describe block's body is only a group of tests.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    plugins: { forewarn: forewarnPlugin },
    rules: {
      'max-lines': SIZE_LIMITS['max-lines'],
      'forewarn/max-lines-per-test-function': SIZE_LIMITS['max-lines-per-function'],
    },
  },
  {
    // The benchmarks are CommonJS run by plain `node` (docs/decisions.md): `require` is their import,
    // and tsc checks their names (tsconfig.bench.json), as it does for the TypeScript files.
    files: ['bench/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    plugins: { forewarn: forewarnPlugin },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      'no-undef': 'off',
      'forewarn/no-jsdoc-any': 'error',
    },
  },
);
