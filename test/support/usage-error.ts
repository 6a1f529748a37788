import { UsageError } from '../../services/flags/command-line';

/** The UsageError `run` throws (a flag or environment value rejected); any other outcome fails. */
export function usageErrorOf(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError');
}
