import { groupOf, type KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import type { VerdictIndex } from './types';

/**
 * Where constraints and their sources come from, as the evaluators see the index. Made per
 * admitted object: lists by kind are kept for the object's evaluation (quotas read the namespace's
 * LimitRanges too).
 */
export function verdictIndexOf(index: ConstraintIndex): VerdictIndex {
  const lists = new Map<string, KubernetesObject[]>();
  return {
    sourceOf: (constraint) => index.sourceOfConstraint(constraint),
    find: (group, kind, namespace, name) => index.findSource(group, kind, namespace, name),
    namespaces: () =>
      index.knownNamespaces().map((name) => ({ name, labels: index.labelsOfNamespace(name) })),
    paramsOfKind: (group, kind) => index.paramsOfKind(group, kind),
    listInNamespace: (group, kind, namespace) => {
      const key = `${group}/${kind}/${namespace}`;
      let list = lists.get(key);
      if (!list) {
        list = index
          .constraintsForNamespace(namespace)
          .filter(
            (constraint) => constraint.source.kind === kind && constraint.source.namespace === namespace,
          )
          .map((constraint) => index.sourceOfConstraint(constraint))
          .filter(
            (source): source is KubernetesObject =>
              source !== undefined && groupOf(source.apiVersion) === group,
          );
        lists.set(key, list);
      }
      return list;
    },
  };
}
