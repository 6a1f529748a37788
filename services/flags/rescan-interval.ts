import { InvalidArgumentError } from 'commander';
import { parseDuration } from './values';

// One rule for the controller's `--rescan-interval`, used by the controller's flag parser and by the
// Pulumi component's argument checks, so a value the component accepts never stops the controller
// at start (exit 2).

/** Rescans hit the API server's discovery endpoints: faster than once a second is a mistake. */
export const MIN_RESCAN_INTERVAL_MS = 1_000;

/** Milliseconds of a rescan interval such as `5m`; throws InvalidArgumentError with the reason. */
export function parseRescanInterval(value: string): number {
  const milliseconds = parseDuration(value);
  if (milliseconds < MIN_RESCAN_INTERVAL_MS)
    throw new InvalidArgumentError(
      `must be at least 1s (discovery is not free), got ${JSON.stringify(value)}`,
    );
  return milliseconds;
}
