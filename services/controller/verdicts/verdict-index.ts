import { groupOf, type KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import type { VerdictIndex } from './types';

const verdictIndexes = new WeakMap<ConstraintIndex, { revision: number; view: VerdictIndex }>();
/**
 * Entries of each of the view's maps before it starts over: an index revision can last long, and a
 * sweep of every workload (the workloads at risk) reads every namespace's lists through the view.
 * Admission checks between two index changes reuse a few namespaces' entries; at 10,000 the two
 * maps held ~1.8 MiB after a sweep at cluster scale, until the next index change.
 */
export const MAX_KEPT = 1_000;

function remember<Key, Value>(map: Map<Key, Value>, key: Key, value: Value): Value {
  if (map.size >= MAX_KEPT) map.clear();
  map.set(key, value);
  return value;
}

/**
 * Where constraints and their sources come from, as the evaluators see the index. Lists by kind
 * (quotas read the namespace's LimitRanges too) depend on the index alone: the view is kept while
 * the index's revision stays, shared by the admission checks in between instead of made per object.
 */
export function verdictIndexOf(index: ConstraintIndex): VerdictIndex {
  const kept = verdictIndexes.get(index);
  if (kept && kept.revision === index.revision) return kept.view;
  const view = verdictIndexAtRevision(index);
  verdictIndexes.set(index, { revision: index.revision, view });
  return view;
}

function verdictIndexAtRevision(index: ConstraintIndex): VerdictIndex {
  const lists = new Map<string, KubernetesObject[]>();
  // By the constraint object: no key sliced from its id and hashed at every admission check.
  const sources = new Map<object, KubernetesObject | undefined>();
  return {
    sourceOf: (constraint) => {
      if (sources.has(constraint)) return sources.get(constraint);
      return remember(sources, constraint, index.sourceOfConstraint(constraint));
    },
    find: (group, kind, namespace, name) => index.findSource(group, kind, namespace, name),
    namespaces: () =>
      index.knownNamespaces().map((name) => ({ name, labels: index.labelsOfNamespace(name) })),
    paramsOfKind: (group, kind) => index.paramsOfKind(group, kind),
    listInNamespace: (group, kind, namespace) => {
      const key = `${group}/${kind}/${namespace}`;
      const kept = lists.get(key);
      if (kept) return kept;
      return remember(
        lists,
        key,
        index
          .constraintsForNamespace(namespace)
          .filter(
            (constraint) => constraint.source.kind === kind && constraint.source.namespace === namespace,
          )
          .map((constraint) => index.sourceOfConstraint(constraint))
          .filter(
            (source): source is KubernetesObject =>
              source !== undefined && groupOf(source.apiVersion) === group,
          ),
      );
    },
  };
}
