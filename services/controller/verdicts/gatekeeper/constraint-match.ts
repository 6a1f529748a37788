import { groupOf, isRecord, isStringRecord, type KubernetesObject } from '../../../model/kubernetes';
import { matchesLabelSelector, parseLabelSelector } from '../../../model/label-selector';
import { namespaceListMatches } from '../../../model/namespace-pattern';
import { matchesWildcard } from '../../../model/wildcard';
import type { VerdictContext } from '../types';

// Whether a Gatekeeper constraint's `spec.match` selects the admitted object, as Gatekeeper's
// target matcher decides: kinds (empty or `*` is any), scope, namespaces and excludedNamespaces
// (prefix/suffix globs; cluster-scoped objects pass both), labelSelector on the object's own labels
// (or the old object's on UPDATE), namespaceSelector on its namespace's labels (a Namespace is
// matched on its own), name (a glob). Namespaces Gatekeeper's Config exempts from the webhook are
// already out of the constraint's scope (adapters/policyengine/gatekeeper-sources.ts).

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** One `kinds` entry: undefined stands for any group or any kind (empty, or `*`). */
interface KindEntry {
  groups: ReadonlySet<string> | undefined;
  kinds: ReadonlySet<string> | undefined;
}

/** A constraint's `spec.match`, read once per constraint revision (the index keeps one per revision). */
interface ParsedMatch {
  /** Undefined: any kind. */
  kinds: KindEntry[] | undefined;
  scope: unknown;
  /** Undefined: no `namespaces` field (every namespace). */
  namespaces: string[] | undefined;
  excludedNamespaces: string[];
  name: string | undefined;
  labelSelector: ReturnType<typeof parseLabelSelector> | undefined;
  namespaceSelector: ReturnType<typeof parseLabelSelector> | undefined;
}

const parsedMatches = new WeakMap<KubernetesObject, ParsedMatch>();

function anyOrSet(values: string[]): ReadonlySet<string> | undefined {
  return values.length === 0 || values.includes('*') ? undefined : new Set(values);
}

function selectorOf(selector: unknown): ReturnType<typeof parseLabelSelector> | undefined {
  return selector === undefined || selector === null
    ? undefined
    : parseLabelSelector(selector, 'spec.match selector');
}

function parseMatch(constraint: KubernetesObject): ParsedMatch {
  const spec = isRecord(constraint.spec) ? constraint.spec : {};
  const match = isRecord(spec.match) ? spec.match : {};
  const kindEntries = Array.isArray(match.kinds) ? match.kinds.filter(isRecord) : [];
  return {
    kinds:
      kindEntries.length === 0
        ? undefined
        : kindEntries.map((entry) => ({
            groups: anyOrSet(strings(entry.apiGroups)),
            kinds: anyOrSet(strings(entry.kinds)),
          })),
    scope: match.scope,
    namespaces: Array.isArray(match.namespaces) ? strings(match.namespaces) : undefined,
    excludedNamespaces: strings(match.excludedNamespaces),
    name: typeof match.name === 'string' ? match.name : undefined,
    labelSelector: selectorOf(match.labelSelector),
    namespaceSelector: selectorOf(match.namespaceSelector),
  };
}

function parsedMatchOf(constraint: KubernetesObject): ParsedMatch {
  let parsed = parsedMatches.get(constraint);
  if (!parsed) {
    parsed = parseMatch(constraint);
    parsedMatches.set(constraint, parsed);
  }
  return parsed;
}

function kindsMatch(entries: readonly KindEntry[] | undefined, group: string, kind: string): boolean {
  return (
    entries === undefined ||
    entries.some(
      (entry) =>
        (entry.groups === undefined || entry.groups.has(group)) &&
        (entry.kinds === undefined || entry.kinds.has(kind)),
    )
  );
}

function labelsOf(object: KubernetesObject | undefined): Record<string, string> {
  return object && isStringRecord(object.metadata?.labels) ? object.metadata.labels : {};
}

function selectorMatches(
  selector: ReturnType<typeof parseLabelSelector> | undefined,
  labels: Record<string, string>,
): boolean {
  return selector === undefined || matchesLabelSelector(selector, labels);
}

/**
 * Whether the constraint reviews the admitted object at all: `undecided` when only its
 * namespaceSelector is left to decide and the index does not know the namespace (nor its labels).
 */
export type ConstraintSelection = 'selected' | 'not-selected' | 'undecided';

export function constraintSelects(
  constraint: KubernetesObject,
  context: VerdictContext,
): ConstraintSelection {
  if (!constraintMatches(constraint, context, { ignoreNamespaceSelector: true })) return 'not-selected';
  const match = parsedMatchOf(constraint);
  const namespace = context.admitted.namespace;
  const isNamespace =
    groupOf(context.admitted.object.apiVersion) === '' && context.admitted.object.kind === 'Namespace';
  if (match.namespaceSelector !== undefined && namespace !== '' && !isNamespace) {
    const known = context.index.namespaces?.().some((entry) => entry.name === namespace) ?? true;
    if (!known) return 'undecided';
  }
  return constraintMatches(constraint, context) ? 'selected' : 'not-selected';
}

function constraintMatches(
  constraint: KubernetesObject,
  context: VerdictContext,
  options: { ignoreNamespaceSelector?: boolean } = {},
): boolean {
  const { object, oldObject } = context.admitted;
  const match = parsedMatchOf(constraint);
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  const isNamespace = group === '' && kind === 'Namespace';
  const namespaced = context.admitted.namespace !== '' && !isNamespace;
  // The namespace the object lives in; a Namespace is matched as its own namespace.
  const namespace = isNamespace ? (object.metadata?.name ?? '') : context.admitted.namespace;

  if (!kindsMatch(match.kinds, group, kind)) return false;
  if (match.scope === 'Cluster' && namespaced) return false;
  if (match.scope === 'Namespaced' && !namespaced) return false;
  if (namespace !== '') {
    if (match.namespaces !== undefined && !namespaceListMatches(match.namespaces, namespace)) return false;
    if (namespaceListMatches(match.excludedNamespaces, namespace)) return false;
  }
  if (match.name !== undefined && !matchesWildcard(match.name, object.metadata?.name ?? '')) return false;
  const labelled =
    selectorMatches(match.labelSelector, labelsOf(object)) ||
    (oldObject !== undefined && selectorMatches(match.labelSelector, labelsOf(oldObject)));
  if (!labelled) return false;
  if (match.namespaceSelector !== undefined && namespace !== '' && !options.ignoreNamespaceSelector) {
    const namespaceLabels = isNamespace ? labelsOf(object) : context.admitted.namespaceLabels;
    if (!selectorMatches(match.namespaceSelector, namespaceLabels)) return false;
  }
  return true;
}
