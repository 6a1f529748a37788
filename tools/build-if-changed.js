// @ts-check
'use strict';

// `npm start`'s build step: nothing when dist/ is newer than every source, else `tsc -b`, which
// rebuilds only what changed since the last build (its record: dist/tsconfig.build.tsbuildinfo).
// Comparing file times here first skips loading TypeScript itself (about a second of CPU) when the
// build is current, so the demo serves within seconds (docs/decisions.md, npm start).

const { spawnSync } = require('node:child_process');
const { readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const RECORD = path.join(ROOT, 'dist/tsconfig.build.tsbuildinfo');
const SOURCE_FOLDERS = ['services', 'infra'];
const SOURCE_FILES = ['tsconfig.json', 'tsconfig.build.json'];

/** @param {string} file */
function modifiedMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The newest source (its path and time), folders walked recursively. */
function newestSource() {
  let newest = { file: '', ms: 0 };
  const consider = (/** @type {string} */ file) => {
    const ms = modifiedMs(file);
    if (ms !== undefined && ms > newest.ms) newest = { file, ms };
  };
  for (const folder of SOURCE_FOLDERS)
    for (const entry of readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true }))
      if (entry.isFile() && entry.name.endsWith('.ts')) consider(path.join(entry.parentPath, entry.name));
  for (const file of SOURCE_FILES) consider(path.join(ROOT, file));
  return newest;
}

const built = modifiedMs(RECORD);
const newest = newestSource();
if (built !== undefined && built >= newest.ms) {
  console.log('forewarn: the build is current (dist/ is newer than every source); starting');
  process.exit(0);
}
console.log(
  built === undefined
    ? 'forewarn: no build yet: compiling everything (tsc -b; a minute or two on a busy machine)...'
    : `forewarn: ${path.relative(ROOT, newest.file)} changed since the last build: compiling what changed (tsc -b)...`,
);
const started = Date.now();
const result = spawnSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-b', path.join(ROOT, 'tsconfig.build.json')],
  { stdio: 'inherit' },
);
if (result.status !== 0) process.exit(result.status ?? 1);
console.log(`forewarn: built in ${((Date.now() - started) / 1000).toFixed(1)} s; starting`);
