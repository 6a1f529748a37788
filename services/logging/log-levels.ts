import type { LevelWithSilent } from 'pino';

// The log levels, apart from the logger: the command-line flag parser checks `--log-level` with them
// and must not load pino (and its worker-thread transport) for `forewarn --version`.

export const LOG_LEVELS: readonly LevelWithSilent[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

export function isLogLevel(value: string): value is LevelWithSilent {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
