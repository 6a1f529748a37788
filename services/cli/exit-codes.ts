import { UsageError } from '../flags/command-line';

// Exit codes of `forewarn` (docs/cli.md). `check` uses 1 and 3 for its findings so a CI step can
// tell "warnings" from "critical"; 2 and 4 separate mistakes in the command from an environment
// that cannot answer, because only the second is worth a retry.

export const EXIT_CODES = {
  /** Success; for `check`: nothing at or above the --fail-on threshold. */
  ok: 0,
  /** `check`: warnings (and --fail-on warning). */
  warnings: 1,
  /** Invalid command line or input: unknown flag, bad namespace, missing or unparsable manifest. */
  usage: 2,
  /** `check`: at least one critical warning (and --fail-on warning or critical). */
  critical: 3,
  /** The controller or the file system could not answer: unreachable, not ready, not found, I/O error. */
  unavailable: 4,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** The controller or the file system could not answer: a message for the user and exit code 4. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** Usage mistakes share the one usage-error class of every Forewarn command line. */
export const usageError = (message: string) => new UsageError(message, EXIT_CODES.usage);
export const unavailableError = (message: string) => new CliError(message, EXIT_CODES.unavailable);

export const PORT_FORWARD_HINT =
  'forward the controller first: kubectl -n forewarn-system port-forward svc/forewarn-controller 8080:8080 (or pass --url / set FOREWARN_URL)';

export const FAIL_ON_LEVELS = ['warning', 'critical', 'never'] as const;
export type FailOn = (typeof FAIL_ON_LEVELS)[number];

/** `check`: 3 for critical, 1 for warnings, 0 otherwise, cut off at the --fail-on threshold. */
export function checkExitCode(criticalCount: number, warningCount: number, failOn: FailOn): ExitCode {
  if (failOn === 'never') return EXIT_CODES.ok;
  if (criticalCount > 0) return EXIT_CODES.critical;
  if (warningCount > 0 && failOn === 'warning') return EXIT_CODES.warnings;
  return EXIT_CODES.ok;
}
