import { readFileSync } from 'node:fs';
import path from 'node:path';

// The version of the installed package, for `forewarn --version` and the MCP server's identity.
// Read from package.json at run time (walking up from this file, which sits at a different depth in
// the sources and in dist/) instead of importing it, so tsc does not copy package.json into dist/.

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let directory = __dirname;
  for (let depth = 0; depth < 6; depth++) {
    try {
      const manifest: unknown = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8'));
      if (
        typeof manifest === 'object' &&
        manifest !== null &&
        'name' in manifest &&
        manifest.name === 'forewarn'
      ) {
        cached = 'version' in manifest && typeof manifest.version === 'string' ? manifest.version : '0.0.0';
        return cached;
      }
    } catch {
      // No package.json at this level: keep walking up.
    }
    directory = path.dirname(directory);
  }
  cached = '0.0.0';
  return cached;
}
