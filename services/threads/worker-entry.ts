import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * How to start a worker thread's script `name` in `directory`: the compiled `.js` file in a build;
 * from the TypeScript sources (jest runs them untranspiled on disk) through swc, the test toolchain's
 * compiler, registered for `.ts`.
 */
export function workerEntry(directory: string, name: string): { script: string; eval: boolean } {
  const compiled = path.join(directory, `${name}.js`);
  if (existsSync(compiled)) return { script: compiled, eval: false };
  const source = path.join(directory, `${name}.ts`);
  const bootstrap = `
    const swc = require(${JSON.stringify(require.resolve('@swc/core'))});
    require.extensions['.ts'] = (module, filename) => {
      const options = { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } };
      module._compile(swc.transformFileSync(filename, options).code, filename);
    };
    require(${JSON.stringify(source)});`;
  return { script: bootstrap, eval: true };
}
