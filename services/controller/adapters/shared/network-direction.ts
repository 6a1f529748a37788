import type { Effect, Severity } from '../../../model/api';
import type {
  ConstraintDraft,
  NamespaceScope,
  RemediationStepTemplate,
  SourceObject,
} from '../../../model/constraint';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { text, type NamePart, type Text } from '../../../model/text';

// The draft of one direction of a network policy (NetworkPolicy-like sources: Cilium, Calico,
// AdminNetworkPolicy), and the naming rule every network-policy source follows (DESIGN.md section 3):
// a policy that governs both directions yields `<name>/ingress` and `<name>/egress`, one that governs
// only one keeps its own name, so a name never changes when the other direction's rules come and go.

export type NetworkDirection = 'ingress' | 'egress';

/** Identity fields of one direction's constraint: id, name, display name and constraint type. */
export function networkDirectionIdentity(
  sourceName: string,
  policy: NamePart,
  direction: NetworkDirection,
  bothDirections: boolean,
): Pick<ConstraintDraft, 'id' | 'name' | 'displayName' | 'type'> {
  return {
    id: direction,
    name: bothDirections ? `${sourceName}/${direction}` : sourceName,
    displayName: bothDirections ? text`${policy}/${direction}` : [policy],
    type: direction === 'ingress' ? 'NetworkIngress' : 'NetworkEgress',
  };
}

/** Which policy and direction a constraint stands for. */
export interface NetworkDirectionOf {
  source: SourceObject;
  /** The policy's name as shown (redactable). */
  policy: NamePart;
  direction: NetworkDirection;
  bothDirections: boolean;
}

export interface NetworkDirectionFields {
  adapter: ConstraintDraft['adapter'];
  severity: Severity;
  effect: Effect;
  scope: NamespaceScope;
  tags: string[];
  summary: Text;
  remediationHint: Text;
  steps: RemediationStepTemplate[];
  /** The pods it selects; undefined when it selects every pod of its scope. */
  workloadSelector?: ConstraintDraft['workloadSelector'];
}

/** One direction's constraint on the workloads' pods; the remediation summary is its hint. */
export function networkDirectionDraft(
  of: NetworkDirectionOf,
  fields: NetworkDirectionFields,
): ConstraintDraft {
  const draft: ConstraintDraft = {
    ...networkDirectionIdentity(of.source.name, of.policy, of.direction, of.bothDirections),
    severity: fields.severity,
    effect: fields.effect,
    adapter: fields.adapter,
    source: of.source,
    scope: fields.scope,
    resourceTargets: [...WORKLOAD_RESOURCES],
    tags: fields.tags,
    summary: fields.summary,
    remediationHint: fields.remediationHint,
    remediation: { summary: fields.remediationHint, steps: fields.steps },
  };
  if (fields.workloadSelector !== undefined) draft.workloadSelector = fields.workloadSelector;
  return draft;
}
