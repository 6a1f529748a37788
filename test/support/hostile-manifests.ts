import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

// The hostile `--manifests` directory of issue 13, item 3, shared by the source's unit test and the
// process test: a tab-indented file, a billion-laughs alias bomb, a 100,000-deep flow sequence and two
// directory link loops (`loop -> .`, `sub/up -> ..`). Each test adds its own good files.

/** Nine levels of nine aliases each: 9^9 expansions if an unbounded parser follows them. */
export function aliasBomb(): string {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let level = 1; level < 10; level++) {
    const previous = String.fromCharCode(97 + level - 1);
    const name = String.fromCharCode(97 + level);
    levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
  }
  return levels.join('\n') + '\n';
}

/** Writes the hostile files and creates `sub/` (with its loop) in `directory`. */
export async function writeHostileFiles(directory: string): Promise<void> {
  await writeFile(
    path.join(directory, 'tab.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n',
  );
  await writeFile(path.join(directory, 'bomb.yaml'), aliasBomb());
  await writeFile(path.join(directory, 'deep.yaml'), `${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
  await mkdir(path.join(directory, 'sub'));
  await symlink('.', path.join(directory, 'loop'));
  await symlink('..', path.join(directory, 'sub/up'));
}

/** The problems health lists for those files, as `<source> <message>` patterns in sorted order. */
export const HOSTILE_FILE_PROBLEMS: readonly RegExp[] = [
  /^manifests: bomb\.yaml:1 .*alias/,
  /^manifests: deep\.yaml:1 .*nests deeper/,
  /^manifests: tab\.yaml:4 .*[Tt]ab/,
];
