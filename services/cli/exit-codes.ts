import { UsageError } from '../flags/command-line';

// Exit codes of `forewarn` (docs/cli.md). `check` uses 3 for an object that will be rejected and 1
// for the other findings about an object (audited, warned, not evaluated), so a CI step can tell
// them apart; constraints that only apply to a namespace (network, mesh) are no finding. 2 and 4
// separate mistakes in the command from an environment that cannot answer, because only the second
// is worth a retry.

export const EXIT_CODES = {
  /** Success; for `check`: nothing at or above the --fail-on threshold. */
  ok: 0,
  /** `check`: an object will be audited or warned about, or a rule about it was not evaluated (and --fail-on warning). */
  warnings: 1,
  /** Invalid command line or input: unknown flag, bad namespace, missing or unparsable manifest. */
  usage: 2,
  /** `check`: at least one object will be rejected (and --fail-on warning or critical). */
  critical: 3,
  /** The controller or the file system could not answer: unreachable, not ready, not found, I/O error. */
  unavailable: 4,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/**
 * What each code means, in the words `forewarn --help`, `forewarn check --help` and the table of
 * docs/cli.md use (a test holds the three to these).
 */
export const EXIT_CODE_MEANINGS: ReadonlyArray<{ code: ExitCode; meaning: string }> = [
  { code: EXIT_CODES.ok, meaning: 'success; for check: nothing at or above --fail-on' },
  {
    code: EXIT_CODES.warnings,
    meaning:
      'check: an object will be audited or warned about, or a rule about it could not be evaluated (--fail-on warning, the default)',
  },
  {
    code: EXIT_CODES.usage,
    meaning:
      'invalid command line or input: unknown option, invalid namespace, a manifest that does not parse',
  },
  { code: EXIT_CODES.critical, meaning: 'check: an object will be rejected (--fail-on warning or critical)' },
  {
    code: EXIT_CODES.unavailable,
    meaning:
      'the controller or the file system could not answer: unreachable, not ready, not found, unreadable',
  },
];

/**
 * Words of `text` on lines of at most `width` characters, the first after `first`, the others
 * after `rest`. Here rather than output.ts's wrapText: help must not load the output module,
 * which the CLI loads lazily.
 */
function wrapText(text: string, width: number, first: string, rest = first): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  return [...lines, line];
}

/** The width commander wraps its own help at: the exit codes follow it. */
const HELP_WIDTH = 80;

/** The exit codes for a help text, one per code, wrapped under their number. */
export function exitCodesHelp(): string {
  return [
    'Exit codes (see docs/cli.md):',
    ...EXIT_CODE_MEANINGS.flatMap(({ code, meaning }) =>
      wrapText(meaning, HELP_WIDTH, `  ${code}  `, '     '),
    ),
    ...wrapText(
      'Network and mesh policies and webhooks that decide by themselves only apply to a namespace: they never fail a check.',
      HELP_WIDTH,
      '',
    ),
  ].join('\n');
}

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

/** `check`: 3 for rejections, 1 for other findings, 0 otherwise, cut off at the --fail-on threshold. */
export function checkExitCode(rejectionCount: number, findingCount: number, failOn: FailOn): ExitCode {
  if (failOn === 'never') return EXIT_CODES.ok;
  if (rejectionCount > 0) return EXIT_CODES.critical;
  if (findingCount > 0 && failOn === 'warning') return EXIT_CODES.warnings;
  return EXIT_CODES.ok;
}
