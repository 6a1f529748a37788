import { InvalidArgumentError } from 'commander';
import { durationMs, rescanIntervalProblem } from '../model/durations';

// The controller's `--rescan-interval`, checked by the same rule as the Pulumi component's
// `controller.rescanInterval` (services/model/durations.ts), so a value the component accepts never
// stops the controller at start (exit 2).

export function parseRescanInterval(value: string): number {
  const problem = rescanIntervalProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return durationMs(value) as number;
}
