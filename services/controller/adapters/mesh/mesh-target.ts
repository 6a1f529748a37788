import type { Effect, Severity } from '../../../model/api';
import type { NamespaceScope, SourceObject } from '../../../model/constraint';
import type { LabelSelector } from '../../../model/kubernetes';
import type { Text } from '../../../model/text';

/** What every mesh constraint shares: where it applies, to which pods, and how to phrase that. */
export interface MeshTarget {
  source: SourceObject & { namespace: string };
  name: Text;
  scope: NamespaceScope;
  meshWide: boolean;
  workloadSelector?: LabelSelector;
  /** `pods app=web in shop`, `all pods in every namespace`, or the targeted gateway or service. */
  appliesTo: Text;
}

export interface MeshOutcome {
  severity: Severity;
  effect: Effect;
  summary: Text;
  remediationHint: Text;
  tags: string[];
}
