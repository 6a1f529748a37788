import { InvalidArgumentError } from 'commander';
import { parseGoDuration } from '../model/duration';

// Parsers of flag values shared by the controller, the webhook and the command line, so a
// duration or a boolean is written the same way on every Forewarn command.

/** Go-style durations, as Kubernetes manifests write them: `24h`, `90s`, `1h30m`, `500ms`. */
export function parseDuration(text: string): number {
  const milliseconds = parseGoDuration(text);
  if (milliseconds === undefined) {
    throw new InvalidArgumentError(
      `expected a duration such as 24h, 30m, 90s or 1h30m, got ${JSON.stringify(text)}`,
    );
  }
  return Math.round(milliseconds);
}

/** Booleans accept `--flag`, `--flag=true|false` and `--flag false`, as container args are written. */
export function parseBoolean(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new InvalidArgumentError(`expected true or false, got ${JSON.stringify(text)}`);
}
