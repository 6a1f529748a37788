// Lets a child `node` process run the webhook's TypeScript sources directly (node -r this-file
// services/webhook/main.ts), compiled by the same @swc/core the jest transform uses, so process
// tests do not depend on a prior `npm run build`.
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
