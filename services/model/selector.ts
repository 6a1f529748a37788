import { matchesCalicoSelector, parseCalicoSelector, type CalicoSelectorNode } from './calico-selector';
import type { LabelSelector, Labels } from './kubernetes';
import { formatLabelSelector, isEmptySelector, matchesLabelSelector } from './label-selector';

// What a constraint's workload selector and namespace selector can be: a Kubernetes label selector
// (most sources), or a source's own expression language (Calico). Every place that evaluates or prints
// a stored selector goes through here, so each is matched with its source's own semantics.

/** A selector written in Calico's expression language, kept with its parsed tree. */
export interface CalicoExpressionSelector {
  calico: string;
  tree: CalicoSelectorNode;
}

export type Selector = LabelSelector | CalicoExpressionSelector;

export function isCalicoSelector(selector: Selector): selector is CalicoExpressionSelector {
  return 'calico' in selector;
}

/** Parses a Calico expression into a stored selector; throws CalicoSelectorError. */
export function calicoSelector(expression: string): CalicoExpressionSelector {
  const calico = expression.trim();
  return { calico, tree: parseCalicoSelector(calico) };
}

/**
 * Whether a pod with these labels is selected. Given the pod's namespace, a Calico selector also sees
 * the labels Calico puts on every workload endpoint: `projectcalico.org/namespace` and
 * `projectcalico.org/orchestrator` (GlobalNetworkPolicies often select pods by namespace that way).
 */
export function matchesSelector(selector: Selector, labels: Labels, namespace?: string): boolean {
  if (!isCalicoSelector(selector)) return matchesLabelSelector(selector, labels);
  const endpointLabels =
    namespace === undefined
      ? labels
      : { ...labels, [CALICO_POD_NAMESPACE_LABEL]: namespace, [CALICO_ORCHESTRATOR_LABEL]: 'k8s' };
  return matchesCalicoSelector(selector.tree, endpointLabels);
}

const CALICO_POD_NAMESPACE_LABEL = 'projectcalico.org/namespace';
const CALICO_ORCHESTRATOR_LABEL = 'projectcalico.org/orchestrator';

/** The label Calico gives every namespace with its name (`projectcalico.org/name == 'kube-system'`). */
const CALICO_NAMESPACE_NAME_LABEL = 'projectcalico.org/name';

/**
 * Whether a namespace is selected. Calico selectors also see the namespace's name under
 * `projectcalico.org/name`, as Calico's own namespace profiles carry it.
 */
export function matchesNamespaceSelector(selector: Selector, namespace: string, labels: Labels): boolean {
  if (!isCalicoSelector(selector)) return matchesLabelSelector(selector, labels);
  return matchesCalicoSelector(selector.tree, { ...labels, [CALICO_NAMESPACE_NAME_LABEL]: namespace });
}

/** Whether the selector selects everything (`{}`, Calico `all()` or an empty expression). */
export function selectsEverything(selector: Selector): boolean {
  return isCalicoSelector(selector) ? selector.tree.op === 'all' : isEmptySelector(selector);
}

/** `app=web,tier in (a,b)` for label selectors; the expression as written for Calico. */
export function formatSelector(selector: Selector): string {
  if (isCalicoSelector(selector)) return selectsEverything(selector) ? 'all pods' : selector.calico;
  return formatLabelSelector(selector);
}
