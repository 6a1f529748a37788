import js from '@eslint/js';
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
    plugins: { forewarn: { rules: { 'no-jsdoc-any': noJsdocAny } } },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      'no-undef': 'off',
      'forewarn/no-jsdoc-any': 'error',
    },
  },
);
