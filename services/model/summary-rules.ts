import { isRecord } from './kubernetes';
import {
  isDetailPart,
  isNamePart,
  REDACTED,
  renderText,
  type Text,
  type TextPart,
  type Viewer,
} from './text';
import { ownEntry } from './own-entry';

// The rules every text a developer reads must follow (DESIGN.md section 3, "Summaries"), in one
// place: the helpers adapters use to write such text (kinds in the plural, parameters summarised,
// repeated placeholders collapsed, one line) and the checker tests run over every rendered entry.
// New adapters use the helpers; `readableTextViolations` is what the corpus tests assert.

/** The longest summary a report entry or warning carries; details belong in the constraint view. */
export const MAX_SUMMARY_LENGTH = 300;
/** The longest run of JSON-like text (brackets without spaces) a summary may hold. */
export const MAX_JSON_RUN = 80;

const IRREGULAR_KIND_PLURALS: Record<string, string> = {
  Endpoints: 'Endpoints',
  EndpointSlice: 'EndpointSlices',
  Ingress: 'Ingresses',
  IngressClass: 'IngressClasses',
  StorageClass: 'StorageClasses',
  PriorityClass: 'PriorityClasses',
  RuntimeClass: 'RuntimeClasses',
  PodSecurityPolicy: 'PodSecurityPolicies',
  NetworkPolicy: 'NetworkPolicies',
};

/** `Service` → `Services`, `Ingress` → `Ingresses`, `NetworkPolicy` → `NetworkPolicies`. */
export function pluralKind(kind: string): string {
  // `Pod exec` (a subresource): the resource in the plural, the subresource after it.
  const space = kind.indexOf(' ');
  if (space > 0) return `${pluralKind(kind.slice(0, space))} (${kind.slice(space + 1)})`;
  const irregular = ownEntry(IRREGULAR_KIND_PLURALS, kind);
  if (irregular) return irregular;
  if (kind === '*' || kind === '') return 'resources';
  if (/[^aeiouAEIOU]y$/.test(kind)) return `${kind.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(kind)) return `${kind}es`;
  return `${kind}s`;
}

/** `1 rule`, `3 rules`: the noun agrees with the count. */
export function countOf(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** `a, b and c`; more than `limit` items end with `and 4 more`. */
export function listInEnglish(items: readonly string[], limit = 4): string {
  if (items.length === 0) return '';
  if (items.length > limit) return `${items.slice(0, limit).join(', ')} and ${items.length - limit} more`;
  if (items.length === 1) return items[0];
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** Kinds in the plural as a list: `Pods, Deployments and StatefulSets`. */
export function kindsInPlural(kinds: readonly string[], limit = 5): string {
  if (kinds.length === 0 || kinds.includes('*')) return 'resources';
  return listInEnglish(kinds.map(pluralKind), limit);
}

const SHORT_VALUE = 40;

function shortScalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value.length <= SHORT_VALUE ? value : undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** One parameter's value as a developer reads it: short scalars and short lists shown, else a count. */
function parameterValueText(value: unknown): string | undefined {
  const scalar = shortScalar(value);
  if (scalar !== undefined) return scalar;
  if (Array.isArray(value)) {
    // A list of objects (`labels: [{key: owner, allowedRegex: ...}]`) reads as their names.
    const flattened = value.map((entry) => {
      if (!isRecord(entry)) return shortScalar(entry);
      const fields = Object.values(entry);
      return shortScalar(entry.key ?? entry.name ?? (fields.length === 1 ? fields[0] : undefined));
    });
    const joined = flattened.every((entry) => entry !== undefined) ? flattened.join(', ') : undefined;
    if (joined !== undefined && joined.length <= SHORT_VALUE) return value.length === 0 ? 'none' : joined;
    return value.every(isRecord) ? countOf(value.length, 'entry', 'entries') : countOf(value.length, 'value');
  }
  if (isRecord(value)) return countOf(Object.keys(value).length, 'setting');
  return undefined;
}

/**
 * Policy parameters as one short phrase: `labels owner; cpu -1; memory 1Gi and 12 more`. Names and
 * short values only, never JSON: the constraint view and the policy itself hold the rest.
 */
export function summariseParameters(parameters: Record<string, unknown>, maxLength = 120): string {
  const names = Object.keys(parameters).sort();
  const shown: string[] = [];
  let length = 0;
  for (const name of names) {
    const value = parameterValueText(parameters[name]);
    const entry = value === undefined || value === '' ? name : `${name} ${value}`;
    if (shown.length > 0 && length + entry.length + 2 > maxLength) break;
    shown.push(entry);
    length += entry.length + 2;
  }
  const rest = names.length - shown.length;
  return rest > 0 ? `${shown.join('; ')} and ${rest} more` : shown.join('; ');
}

/** Whitespace (newlines, tabs, runs of spaces) as single spaces, trimmed. */
export function singleLine(value: string): string {
  // Most texts already are one line: testing is cheaper than rebuilding every string of a report.
  if (!WHITESPACE_TO_FOLD.test(value)) return value.trim();
  return value.replace(/\s+/g, ' ').trim();
}
/** Two whitespace characters in a row, or one that is not a plain space: what `\s+` → ' ' changes. */
const WHITESPACE_TO_FOLD = /\s\s|[^\S ]/;

/** At most `max` characters, cut at a word boundary and marked with `…`. */
export function shorten(value: string, max = MAX_SUMMARY_LENGTH): string {
  if (value.length <= max) return value;
  const cut = value.slice(0, max - 1);
  const boundary = cut.lastIndexOf(' ');
  return `${(boundary > max * 0.6 ? cut.slice(0, boundary) : cut).replace(/[\s,;:]+$/, '')}…`;
}

const SEPARATORS = String.raw`(?:, | or | and |; )`;

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`);
}

// Placeholders come from adapters' own texts (a handful of phrases), so their compiled patterns are
// kept; the bound only guards against an adapter that makes placeholders up from object data.
const PLACEHOLDER_RUNS = new Map<string, RegExp>();
const MAX_PLACEHOLDER_RUNS = 1_000;

/** The pattern of two or more of `placeholder` joined by list separators. */
function placeholderRun(placeholder: string): RegExp {
  let run = PLACEHOLDER_RUNS.get(placeholder);
  if (!run) {
    const item = escapeRegExp(placeholder);
    run = new RegExp(String.raw`(?<![\w-])${item}(?:${SEPARATORS}${item}(?![\w-]))+`, 'g');
    if (PLACEHOLDER_RUNS.size >= MAX_PLACEHOLDER_RUNS) PLACEHOLDER_RUNS.clear();
    PLACEHOLDER_RUNS.set(placeholder, run);
  }
  return run;
}

function collapsedPhrase(placeholder: string, count: number): string {
  if (placeholder === REDACTED) return `${count} redacted names`;
  const article = /^an? (.+)$/.exec(placeholder);
  if (article) return `${count} ${article[1]}s`;
  return `${placeholder} (${count} times)`;
}

/**
 * `a principal or a principal or a principal` → `3 principals`; `redacted, redacted` → `2 redacted
 * names`. Redaction replaces each hidden value with the same placeholder, so lists of hidden values
 * would otherwise read as stutter.
 */
export function collapseRepeatedPlaceholders(value: string, placeholders: readonly string[]): string {
  let result = value;
  for (const placeholder of [...new Set([REDACTED, ...placeholders])]) {
    // A run needs the placeholder twice; most texts of a report have it once or not at all.
    const first = result.indexOf(placeholder);
    if (first === -1 || result.indexOf(placeholder, first + 1) === -1) continue;
    result = result.replace(placeholderRun(placeholder), (match) => {
      const count = match.split(new RegExp(SEPARATORS)).length;
      return collapsedPhrase(placeholder, count);
    });
  }
  return result;
}

/** A rendered summary or hint as a readable line: one line, placeholders collapsed, ≤ 300 characters. */
export function readableLine(value: string, placeholders: readonly string[] = []): string {
  return shorten(collapseRepeatedPlaceholders(singleLine(value), placeholders));
}

const NUMBER_DISAGREEMENT =
  /\b(?:rejects|reports|warns about|audits|mutates|changes|generates|deletes|checks)(?: \([^)]*\))? (?:[A-Z][A-Za-z]*[a-rt-z], )*[A-Z][A-Za-z]*[a-rt-z] (?:that|named|labelled|in)\b/;

/**
 * What is wrong with a text a developer reads, as sentences (empty: nothing). Checked: one line, no
 * surrounding whitespace, at most 300 characters, no JSON run over 80 characters, no repeated
 * redaction placeholder, kinds in the plural after a verb, no `undefined` / `[object Object]` /
 * `NaN` leaking from code (English "be undefined" in a policy's own message is allowed).
 */
export function readableTextViolations(value: string, placeholders: readonly string[] = []): string[] {
  const problems: string[] = [];
  if (/[\r\n]/.test(value)) problems.push('holds a line break');
  if (value !== value.trim()) problems.push('has leading or trailing whitespace');
  if (value.length > MAX_SUMMARY_LENGTH)
    problems.push(`is ${value.length} characters long (at most ${MAX_SUMMARY_LENGTH})`);
  if (new RegExp(String.raw`[[{][^\s]{${MAX_JSON_RUN},}`).test(value))
    problems.push(`holds a JSON-like run of more than ${MAX_JSON_RUN} characters`);
  if (
    collapseRepeatedPlaceholders(value, placeholders) !== value ||
    /(?<![\w-])((?:[\w-]+ ){0,2}[\w-]+)(?:(?:, | or | and )\1(?![\w-])){2,}/.test(value)
  )
    problems.push('repeats a placeholder');
  if (NUMBER_DISAGREEMENT.test(value))
    problems.push('names a kind in the singular where it means all of them');
  if (/\[object Object\]|\bNaN\b|(?<!\b(?:be|is|are|remain|or) )\bundefined\b/.test(value))
    problems.push('leaks a value from code (undefined, [object Object], NaN)');
  return problems;
}

/** Throws naming the text and its problems; for tests over many rendered entries. */
export function assertReadableLine(value: string, where: string, placeholders: readonly string[] = []): void {
  const problems = readableTextViolations(value, placeholders);
  if (problems.length > 0) throw new Error(`${where}: ${JSON.stringify(value)} ${problems.join('; ')}`);
}

/** The placeholders a Text shows for its hidden parts (`redacted`, `a principal`, ...). */
export function placeholdersOf(value: Text): string[] {
  const placeholders = new Set<string>();
  for (const part of value)
    if (isNamePart(part) || isDetailPart(part)) placeholders.add(part.redacted ?? REDACTED);
  return [...placeholders];
}

/**
 * A Text rendered for a viewer as a readable line. Every view renders summaries and hints through
 * this, so an adapter's long or multi-line text (a policy's own block-scalar message) still reads
 * as one line there.
 */
export function renderReadableLine(value: Text, viewer: Viewer): string {
  return readableLine(renderText(value, viewer), placeholdersOf(value));
}

/** `a, b, c, d and 3 more`: a list of plain values cut after `limit` entries. */
export function joinLimitedStrings(values: readonly string[], limit = 4, separator = ', '): string {
  if (values.length <= limit) return values.join(separator);
  return `${values.slice(0, limit).join(separator)} and ${values.length - limit} more`;
}

/**
 * Texts joined, cut after `limit` entries with `and 3 more rules` (the noun in the plural): a
 * summary names the first few and leaves the rest to the policy itself.
 */
export function joinLimited(texts: readonly Text[], separator: string, limit: number, noun: string): Text {
  const shown = texts.slice(0, limit);
  const result: TextPart[] = [];
  shown.forEach((item, index) => {
    if (index > 0) result.push(separator);
    result.push(...item);
  });
  const rest = texts.length - shown.length;
  if (rest > 0) result.push(` and ${countOf(rest, `more ${noun}`, `more ${noun}s`)}`);
  return result;
}
