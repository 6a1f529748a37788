import { InvalidArgumentError } from 'commander';
import { rescanIntervalProblem } from '../model/duration';
import { parseDuration } from './values';

// One rule for the controller's `--rescan-interval`, used by the controller's flag parser and by the
// Pulumi component's argument checks (through services/model/duration.ts), so a value the component accepts never stops the controller
// at start (exit 2).

/** Milliseconds of a rescan interval such as `5m`; throws InvalidArgumentError with the reason. */
export function parseRescanInterval(value: string): number {
  const milliseconds = parseDuration(value);
  const problem = rescanIntervalProblem(milliseconds);
  if (problem) throw new InvalidArgumentError(`${problem}, got ${JSON.stringify(value)}`);
  return milliseconds;
}
