import type { Effect, Severity } from '../../../model/api';
import type {
  ConstraintDraft,
  NamespaceScope,
  RemediationStepTemplate,
  ResourceTarget,
  SourceObject,
} from '../../../model/constraint';
import type { LabelSelector } from '../../../model/kubernetes';
import type { Text } from '../../../model/text';

// The draft every policy-engine policy becomes (Gatekeeper constraints, Kyverno rules, CEL and
// cleanup policies): an Admission constraint whose remediation summary is its hint.

/** What the policy does to a matching request, and how the constraint says it. */
export interface EngineOutcome {
  severity: Severity;
  effect: Effect;
  summary: Text;
  hint: Text;
  tags: string[];
}

export interface EngineDraftFields {
  id: string;
  name: string;
  displayName: Text;
  source: SourceObject;
  scope: NamespaceScope;
  outcome: EngineOutcome;
  steps: RemediationStepTemplate[];
  workloadSelector?: LabelSelector;
  resourceTargets?: ResourceTarget[];
}

export function policyEngineDraft(fields: EngineDraftFields): ConstraintDraft {
  const { outcome } = fields;
  return {
    id: fields.id,
    name: fields.name,
    displayName: fields.displayName,
    type: 'Admission',
    severity: outcome.severity,
    effect: outcome.effect,
    adapter: 'policyengine',
    source: fields.source,
    scope: fields.scope,
    ...(fields.workloadSelector ? { workloadSelector: fields.workloadSelector } : {}),
    ...(fields.resourceTargets ? { resourceTargets: fields.resourceTargets } : {}),
    tags: outcome.tags,
    summary: outcome.summary,
    remediationHint: outcome.hint,
    remediation: { summary: outcome.hint, steps: fields.steps },
  };
}
