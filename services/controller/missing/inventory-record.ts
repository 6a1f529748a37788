import type { Labels } from '../../model/kubernetes';

// A compact inventory of the objects companion rules look for: identity, labels, and the few spec
// fields a rule reads (a Service's selector, a monitor's selectors). Never whole objects. Records
// share what repeats (namespace and kind strings, label sets: shared-values.ts): at cluster scale
// they are one per Deployment, Service and policy object.

export interface InventoryRecord {
  group: string;
  kind: string;
  namespace: string | null;
  name: string;
  labels: Labels;
  /** Service `spec.selector` (pods it routes to). */
  serviceSelector?: Labels;
  /** ServiceMonitor / PodMonitor `spec.selector` as matchLabels/matchExpressions. */
  monitorSelector?: unknown;
  /** ServiceMonitor / PodMonitor `spec.namespaceSelector`: `{any: true}` or `{matchNames: [...]}`. */
  monitorNamespaces?: { any: boolean; names: string[] };
  /** PeerAuthentication / other selector-carrying kinds: whether a workload selector is set. */
  hasWorkloadSelector?: boolean;
}
