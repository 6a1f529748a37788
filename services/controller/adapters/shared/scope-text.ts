import { AdapterParseError, type NamespaceScope } from '../../../model/constraint';
import { isRecord, type LabelSelector } from '../../../model/kubernetes';
import { formatSelector, selectsEverything, type Selector } from '../../../model/selector';
import { joinLimited } from '../../../model/summary-rules';
import { detail, joinText, namespaceName, text, type Text } from '../../../model/text';

// Helpers shared by the policy adapters whose sources name namespaces and selectors (cni,
// policyengine, mesh): privacy-aware descriptions of where a constraint applies, selector algebra
// for merging several rules of one object, and small strict readers the generic ones lack.

/** `a, b, c` with every namespace redactable on its own (a viewer sees only their own namespace). */
export function namespaceListText(namespaces: readonly string[]): Text {
  return joinLimited(
    namespaces.map((namespace) => [namespaceName(namespace)]),
    ', ',
    4,
    'namespace',
  );
}

/** `pods app=web` as a detail (selectors are rule details); `all pods` is no secret. */
export function podsText(selector: Selector | undefined): Text {
  if (selector === undefined || selectsEverything(selector)) return text`all pods`;
  return [detail(`pods ${formatSelector(selector)}`, 'selected pods')];
}

/**
 * Where a constraint applies: `in shop`, `in namespaces a, b labelled env=prod except c`,
 * `in every namespace`.
 */
export function scopeText(scope: NamespaceScope): Text {
  if (scope.kind === 'none') return text`in no namespace`;
  if (scope.kind === 'namespace') return text`in ${namespaceName(scope.namespace)}`;
  const parts: Text[] = [];
  const namespaces = scope.namespaces ?? [];
  if (namespaces.length > 0)
    parts.push(
      text`in ${namespaces.length === 1 ? 'namespace' : 'namespaces'} ${namespaceListText(namespaces)}`,
    );
  if (scope.namespaceSelector !== undefined && !selectsEverything(scope.namespaceSelector)) {
    const labelled = text`labelled ${detail(formatSelector(scope.namespaceSelector), 'as selected')}`;
    parts.push(parts.length > 0 ? labelled : text`in namespaces ${labelled}`);
  }
  if (parts.length === 0) parts.push(text`in every namespace`);
  const excluded = scope.excludedNamespaces ?? [];
  if (excluded.length > 0) parts.push(text`except ${namespaceListText(excluded)}`);
  return joinText(parts, ' ');
}

/** A cluster scope without empty lists or selectors, so equal scopes compare (and serialise) equal. */
export function clusterScope(
  namespaces: readonly string[] | undefined,
  excludedNamespaces: readonly string[] | undefined,
  namespaceSelector: Selector | undefined,
): NamespaceScope {
  const scope: NamespaceScope = { kind: 'cluster' };
  if (namespaces !== undefined && namespaces.length > 0) scope.namespaces = uniqueSorted(namespaces);
  if (excludedNamespaces !== undefined && excludedNamespaces.length > 0)
    scope.excludedNamespaces = uniqueSorted(excludedNamespaces);
  if (namespaceSelector !== undefined && !selectsEverything(namespaceSelector))
    scope.namespaceSelector = namespaceSelector;
  return scope;
}

export function uniqueSorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** JSON with object keys sorted: two selectors written in different key orders compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * The one value all entries share, or undefined when they differ. Used where several rules of one
 * object are merged into one constraint: a union of different selectors is not a label selector, so
 * the merged constraint over-approximates (applies to every workload) rather than miss some.
 */
export function commonValue<T>(values: readonly T[]): T | undefined {
  if (values.length === 0) return undefined;
  const first = canonicalJson(values[0]);
  return values.every((value) => canonicalJson(value) === first) ? values[0] : undefined;
}

/** The conjunction of two label selectors (both must match): labels merged, expressions appended. */
export function andSelectors(
  left: LabelSelector | undefined,
  right: LabelSelector | undefined,
): LabelSelector | undefined {
  if (left === undefined) return right;
  if (right === undefined) return left;
  const result: LabelSelector = {};
  const matchLabels = { ...left.matchLabels };
  const matchExpressions = [...(left.matchExpressions ?? []), ...(right.matchExpressions ?? [])];
  for (const [key, value] of Object.entries(right.matchLabels ?? {})) {
    // A key required to equal two different values matches nothing; an In with both values keeps
    // that meaning (In needs the label to equal one value, matchLabels another).
    if (matchLabels[key] !== undefined && matchLabels[key] !== value)
      matchExpressions.push({ key, operator: 'In', values: [value] });
    else matchLabels[key] = value;
  }
  if (Object.keys(matchLabels).length > 0) result.matchLabels = matchLabels;
  if (matchExpressions.length > 0) result.matchExpressions = matchExpressions;
  return result;
}

/** A required string field. */
export function readRequiredString(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '')
    throw new AdapterParseError(`${where} must be a non-empty string`);
  return value;
}

/** A map of strings to strings (Istio `matchLabels`), or undefined when absent. */
export function readStringMap(value: unknown, where: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new AdapterParseError(`${where} must be a map of strings`);
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw new AdapterParseError(`${where}.${key} must be a string`);
  }
  return { ...(value as Record<string, string>) };
}

/**
 * A field's value for an error message. Only scalars are printed: an arbitrary object could make
 * the message itself throw (a BigInt, a `toJSON` that is not a function), turning a parse error into
 * a crash.
 */
export function quoted(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`;
}

/** One of a fixed set of values, or the default when absent. */
export function readChoice<T extends string>(
  value: unknown,
  where: string,
  choices: readonly T[],
  defaultValue: T,
): T {
  if (value === undefined || value === null) return defaultValue;
  const found = choices.find((choice) => choice === value);
  if (found === undefined)
    throw new AdapterParseError(`${where} is ${quoted(value)}, expected one of ${choices.join(', ')}`);
  return found;
}
