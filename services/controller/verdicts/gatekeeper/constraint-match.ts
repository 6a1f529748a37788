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

function kindsMatch(match: Record<string, unknown>, group: string, kind: string): boolean {
  if (!Array.isArray(match.kinds)) return true;
  const entries = match.kinds.filter(isRecord);
  if (entries.length === 0) return true;
  return entries.some((entry) => {
    const groups = strings(entry.apiGroups);
    const kinds = strings(entry.kinds);
    return (
      (groups.length === 0 || groups.includes('*') || groups.includes(group)) &&
      (kinds.length === 0 || kinds.includes('*') || kinds.includes(kind))
    );
  });
}

function labelsOf(object: KubernetesObject | undefined): Record<string, string> {
  return object && isStringRecord(object.metadata?.labels) ? object.metadata.labels : {};
}

function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return true;
  return matchesLabelSelector(parseLabelSelector(selector, 'spec.match selector'), labels);
}

/** Whether the constraint reviews the admitted object at all. */
export function constraintMatches(constraint: KubernetesObject, context: VerdictContext): boolean {
  const { object, oldObject } = context.admitted;
  const spec = isRecord(constraint.spec) ? constraint.spec : {};
  const match = isRecord(spec.match) ? spec.match : {};
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  const isNamespace = group === '' && kind === 'Namespace';
  const namespaced = context.admitted.namespace !== '' && !isNamespace;
  // The namespace the object lives in; a Namespace is matched as its own namespace.
  const namespace = isNamespace ? (object.metadata?.name ?? '') : context.admitted.namespace;

  if (!kindsMatch(match, group, kind)) return false;
  if (match.scope === 'Cluster' && namespaced) return false;
  if (match.scope === 'Namespaced' && !namespaced) return false;
  if (namespace !== '') {
    const namespaces = strings(match.namespaces);
    if (Array.isArray(match.namespaces) && !namespaceListMatches(namespaces, namespace)) return false;
    if (namespaceListMatches(strings(match.excludedNamespaces), namespace)) return false;
  }
  if (typeof match.name === 'string') {
    const name = object.metadata?.name ?? '';
    if (!matchesWildcard(match.name, name)) return false;
  }
  const labelled =
    selectorMatches(match.labelSelector, labelsOf(object)) ||
    (oldObject !== undefined && selectorMatches(match.labelSelector, labelsOf(oldObject)));
  if (!labelled) return false;
  if (match.namespaceSelector !== undefined && namespace !== '') {
    const namespaceLabels = isNamespace ? labelsOf(object) : context.admitted.namespaceLabels;
    if (!selectorMatches(match.namespaceSelector, namespaceLabels)) return false;
  }
  return true;
}
