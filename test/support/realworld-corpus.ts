import { existsSync } from 'node:fs';
import path from 'node:path';

// Where the team's third-party corpus (`../shared/realworld`) is: beside the repository, or beside the
// folder of worktrees; FOREWARN_REALWORLD_DIR overrides. Undefined when it is not on this machine.

const REPOSITORY_ROOT = path.resolve(__dirname, '../..');

export function realworldDirectory(): string | undefined {
  const candidates = [
    process.env.FOREWARN_REALWORLD_DIR,
    path.join(REPOSITORY_ROOT, '../shared/realworld'),
    path.join(REPOSITORY_ROOT, '../../shared/realworld'),
  ].filter((candidate): candidate is string => typeof candidate === 'string' && candidate !== '');
  return candidates.find((candidate) => existsSync(path.join(candidate, 'policies')));
}
