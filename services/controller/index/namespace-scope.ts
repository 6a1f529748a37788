import type { Constraint, NamespaceScope } from '../../model/constraint';
import { groupOf, type Labels } from '../../model/kubernetes';
import { matchesNamespaceSelector } from '../../model/selector';
import { GATEKEEPER_CONSTRAINT_GROUP } from '../../model/gatekeeper';
import { namespaceListMatches } from '../../model/namespace-pattern';

// Which namespaces a constraint's scope admits, from the namespace's name and labels (the index keeps
// the labels of the namespaces it watches).

/** The label the API server gives every namespace: its own name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export function scopeAdmits(scope: NamespaceScope, namespace: string, labels: Labels): boolean {
  if (scope.kind === 'none') return false;
  if (scope.kind === 'namespace') return scope.namespace === namespace;
  if (
    scope.namespaces !== undefined &&
    scope.namespaces.length > 0 &&
    !namespaceListMatches(scope.namespaces, namespace)
  )
    return false;
  if (scope.excludedNamespaces !== undefined && namespaceListMatches(scope.excludedNamespaces, namespace))
    return false;
  if (
    scope.namespaceSelector !== undefined &&
    !matchesNamespaceSelector(scope.namespaceSelector, namespace, labels)
  )
    return false;
  return true;
}

/**
 * A Gatekeeper constraint whose namespaceSelector alone keeps it from a namespace the index does not
 * know: the namespace's labels are not known, so it is listed and its verdict says it cannot tell
 * (verdicts/gatekeeper/constraint-match.ts) rather than being left out as if it did not select it.
 */
export function selectorUndecidedHere(constraint: Constraint, namespace: string, labels: Labels): boolean {
  return (
    constraint.scope.kind === 'cluster' &&
    constraint.scope.namespaceSelector !== undefined &&
    groupOf(constraint.source.apiVersion) === GATEKEEPER_CONSTRAINT_GROUP &&
    scopeAdmits({ ...constraint.scope, namespaceSelector: undefined }, namespace, labels)
  );
}
