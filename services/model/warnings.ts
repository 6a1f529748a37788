import type { ListedConstraint, Severity, VerdictName } from './api';

// Admission warnings (spec 4.5): one line per Warning or Critical constraint, `[CRITICAL] <summary> -
// <remediation hint>`, shortened as the API server requires. The webhook returns them; `check` (MCP
// and CLI) shows exactly the same text and counts them by the severity kept beside each text.

/** The API server truncates longer warnings (256 runes); we shorten first so the ellipsis is ours. */
export const MAX_WARNING_LENGTH = 256;
const ELLIPSIS = '…';

/** The inputs of one warning: a subset of the controller's ListedConstraint, with its verdict if any. */
export type WarningSource = Pick<ListedConstraint, 'severity' | 'summary' | 'remediationHint' | 'ref'> & {
  verdict?: VerdictName;
};

const SEVERITY_PREFIX: Record<Severity, string | null> = {
  Critical: '[CRITICAL]',
  Warning: '[WARNING]',
  Info: null,
};

// Printable ASCII words separated by single spaces: nothing for singleLine to change. Most
// summaries look like this, and skipping the two Unicode-aware replacements for them took the
// warning formatting from ~10% to ~1% of the webhook's CPU per review (docs/benchmarks.md).
const PLAIN_SINGLE_LINE = /^[!-~]+(?: [!-~]+)*$/;

// Warnings travel in an HTTP `Warning` header: control characters (newlines from a multi-line
// annotation, tabs) would corrupt it, so they become spaces. The command line prints policy text
// through it too: an escape sequence in a policy's message never reaches the terminal.
export function singleLine(text: string): string {
  if (PLAIN_SINGLE_LINE.test(text)) return text;
  return text
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Shortens to at most `max` characters (code points, as the API server counts runes), ending in `…`. */
export function shortenWarning(text: string, max = MAX_WARNING_LENGTH): string {
  // A string never has more code points than UTF-16 units: short ones need no counting.
  if (text.length <= max) return text;
  // Count code points in place (a surrogate pair is one) instead of splitting the text into an
  // array of them: long warnings are common, and the array was ~8% of the webhook's CPU per review.
  let index = 0;
  let cut = 0;
  for (let counted = 0; index < text.length; counted++) {
    if (counted === max - 1) cut = index;
    if (counted === max) return `${text.slice(0, cut).trimEnd()}${ELLIPSIS}`;
    index += (text.codePointAt(index) ?? 0) > 0xffff ? 2 : 1;
  }
  return text;
}

/**
 * `[CRITICAL] <summary> - <remediation hint>`; null for Info, which never becomes a warning. A
 * constraint whose name the reader may not see carries its opaque reference right after the prefix,
 * `[CRITICAL] (ref fw-…) <summary>`, where shortening never cuts it.
 */
export function formatWarning(constraint: WarningSource): string | null {
  const severityPrefix = SEVERITY_PREFIX[constraint.severity];
  if (!severityPrefix) return null;
  const prefix = constraint.ref ? `${severityPrefix} (ref ${singleLine(constraint.ref)})` : severityPrefix;
  const summary = singleLine(constraint.summary);
  const hint = singleLine(constraint.remediationHint);
  // A constraint without a hint still warns; a dangling " - " would read as a formatting bug.
  return shortenWarning(hint ? `${prefix} ${summary} - ${hint}` : `${prefix} ${summary}`);
}

/** A warning with its severity kept as data, for callers that count or sort them. */
export interface AdmissionWarning {
  severity: Exclude<Severity, 'Info'>;
  text: string;
}

/**
 * Warning and Critical constraints as warnings, no duplicates: Critical before Warning (DESIGN.md 7),
 * and within a severity what the object violates first (DESIGN.md 7b), order kept otherwise. A
 * `passes` verdict gives no warning.
 */
export function orderedWarnings(constraints: readonly WarningSource[]): AdmissionWarning[] {
  const warnings = new Map<string, AdmissionWarning>();
  for (const severity of ['Critical', 'Warning'] as const)
    for (const violations of [true, false])
      for (const constraint of constraints) {
        if (constraint.severity !== severity || constraint.verdict === 'passes') continue;
        if ((constraint.verdict === 'violates') !== violations) continue;
        const text = formatWarning(constraint);
        if (text !== null && !warnings.has(text)) warnings.set(text, { severity, text });
      }
  return [...warnings.values()];
}

/** The warning texts the webhook returns, in the order of orderedWarnings. */
export function buildWarnings(constraints: readonly WarningSource[]): string[] {
  return orderedWarnings(constraints).map((warning) => warning.text);
}
