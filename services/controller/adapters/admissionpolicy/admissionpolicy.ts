import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type ConstraintDraft,
  type NamespaceScope,
  type ResourceTarget,
  type SourceObject,
} from '../../../model/constraint';
import {
  isRecord,
  type KubernetesObject,
  type LabelSelector,
  type LabelSelectorRequirement,
} from '../../../model/kubernetes';
import { detail, objectName, text, type Text } from '../../../model/text';
import {
  describeOperations,
  describeTargets,
  NO_ADMISSION_RULES,
  readMatchResources,
  withoutExcluded,
  type MatchResources,
} from '../shared/admission-rules';
import { readValidationActions, type ValidationOutcomes } from '../shared/validation-actions';
import { readOptionalString, readRecordList, requireSpec, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding →
// one Admission constraint per binding, named after the binding. A policy enforces nothing until a
// binding binds it, so a policy alone yields no constraint; both kinds are retained by the ingest
// layer so a binding is evaluated again when its policy arrives, changes or goes away.

const GROUP = 'admissionregistration.k8s.io';
const POLICY_KIND = 'ValidatingAdmissionPolicy';
const BINDING_KIND = 'ValidatingAdmissionPolicyBinding';

/** Per action, strongest first: what the binding does to a request that fails the policy. */
const ACTION_OUTCOMES: ValidationOutcomes = {
  Deny: { severity: 'Critical', effect: 'deny', verb: 'rejects' },
  Warn: { severity: 'Warning', effect: 'warn', verb: 'warns about' },
  Audit: { severity: 'Info', effect: 'audit', verb: 'audits' },
};

/** What the binding finally intercepts. */
interface AppliedMatch {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  targets: ResourceTarget[];
  operations: string[];
  /** Its rules name only `scope: Cluster` resources: it reaches no namespaced object. */
  clusterScopedOnly: boolean;
}

interface PolicyFacts {
  match: MatchResources;
  messages: string[];
  validationCount: number;
}

function readPolicy(policy: KubernetesObject): PolicyFacts {
  const spec = requireSpec(policy);
  const validations = readRecordList(spec.validations, 'spec.validations');
  const messages = validations.flatMap((validation, index) => {
    if (typeof validation.expression !== 'string' || validation.expression === '')
      throw new AdapterParseError(`spec.validations[${index}].expression must be a non-empty string`);
    const message = readOptionalString(validation.message, `spec.validations[${index}].message`);
    return message ? [message] : [];
  });
  return {
    match: readMatchResources(spec.matchConstraints, 'spec.matchConstraints'),
    messages,
    validationCount: validations.length,
  };
}

/** Both selectors must hold: matchLabels merged, a conflicting label kept as an `In` requirement. */
function bothSelectors(first?: LabelSelector, second?: LabelSelector): LabelSelector | undefined {
  if (!first) return second;
  if (!second) return first;
  const matchLabels: Record<string, string> = { ...first.matchLabels };
  const conflicts: LabelSelectorRequirement[] = [];
  for (const [key, value] of Object.entries(second.matchLabels ?? {})) {
    if (Object.hasOwn(matchLabels, key) && matchLabels[key] !== value)
      conflicts.push({ key, operator: 'In', values: [value] });
    else matchLabels[key] = value;
  }
  const matchExpressions = [
    ...(first.matchExpressions ?? []),
    ...conflicts,
    ...(second.matchExpressions ?? []),
  ];
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

/** The common part of two group or resource names, `*` honoured; undefined when disjoint. */
function commonPart(first: string, second: string): string | undefined {
  if (first === '*') return second;
  if (second === '*' || first === second) return first;
  return undefined;
}

function bothTargets(
  policy: readonly ResourceTarget[],
  binding: readonly ResourceTarget[],
): ResourceTarget[] {
  const targets: ResourceTarget[] = [];
  for (const policyTarget of policy) {
    for (const bindingTarget of binding) {
      const group = commonPart(policyTarget.group, bindingTarget.group);
      const resource = commonPart(policyTarget.resource, bindingTarget.resource);
      if (group === undefined || resource === undefined) continue;
      if (!targets.some((known) => known.group === group && known.resource === resource))
        targets.push({ group, resource });
    }
  }
  return targets;
}

function bothOperations(policy: readonly string[], binding: readonly string[]): string[] {
  if (policy.includes('*')) return [...binding];
  if (binding.includes('*')) return [...policy];
  return policy.filter((operation) => binding.includes(operation));
}

/**
 * Where the binding applies: the policy's matchConstraints narrowed by the binding's matchResources.
 * Excluded rules remove only targets they name exactly; a wildcard minus one resource cannot be
 * written as a target list, so it stays a wildcard (over-reporting rather than hiding a policy).
 */
function narrow(policy: MatchResources, binding: MatchResources): AppliedMatch {
  const policyRules = policy.rules ?? NO_ADMISSION_RULES;
  const targets = binding.rules
    ? bothTargets(policyRules.targets, binding.rules.targets)
    : policyRules.targets;
  const excluded = [...policy.excluded, ...binding.excluded];
  const operations = binding.rules
    ? bothOperations(policyRules.operations, binding.rules.operations)
    : policyRules.operations;
  return {
    namespaceSelector: bothSelectors(policy.namespaceSelector, binding.namespaceSelector),
    objectSelector: bothSelectors(policy.objectSelector, binding.objectSelector),
    // A request must match both rule sets: with no operation in common, nothing is intercepted.
    targets: operations.length > 0 ? withoutExcluded(targets, excluded) : [],
    operations,
    clusterScopedOnly:
      policyRules.targets.length === 0 &&
      policyRules.skippedClusterScoped &&
      !policyRules.skippedSubresources,
  };
}

/** The bound policy's facts; its parse errors are reported on the binding with the policy named. */
function readBoundPolicy(policy: KubernetesObject, policyName: string): PolicyFacts {
  try {
    return readPolicy(policy);
  } catch (error) {
    if (error instanceof AdapterParseError)
      throw new AdapterParseError(`bound ${POLICY_KIND} ${JSON.stringify(policyName)}: ${error.message}`);
    throw error;
  }
}

/**
 * The params a binding reads (issue 32, row 11): its verdicts' messageExpressions may print their
 * values, so a caller sees the constraint at `full` through its own RBAC only when it may read them
 * too. A param kind is not a kind Forewarn can name a read access for (custom, or a selector of
 * many objects), so such a binding is never elevated: the controller's level for every caller.
 */
function paramSourceOf(
  policy: KubernetesObject,
  bindingSpec: Record<string, unknown>,
): SourceObject | undefined {
  const paramKind = isRecord(policy.spec) ? policy.spec.paramKind : undefined;
  const paramRef = bindingSpec.paramRef;
  if (!isRecord(paramKind) || !isRecord(paramRef)) return undefined;
  return {
    kind: typeof paramKind.kind === 'string' ? paramKind.kind : '',
    apiVersion: typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : '',
    name: typeof paramRef.name === 'string' ? paramRef.name : '',
    namespace: typeof paramRef.namespace === 'string' ? paramRef.namespace : null,
  };
}

function bindingToConstraints(object: KubernetesObject, context: AdapterContext): ConstraintDraft[] {
  const source = sourceOf(object, false);
  const spec = requireSpec(object);
  const policyName = readOptionalString(spec.policyName, 'spec.policyName');
  if (!policyName) throw new AdapterParseError('spec.policyName must be a non-empty string');
  const actions = readValidationActions(spec);
  const bindingMatch = readMatchResources(spec.matchResources, 'spec.matchResources');
  const policyObject = context.lookup({ group: GROUP, kind: POLICY_KIND }, null, policyName);
  // A binding whose policy is not there (yet) enforces nothing; it is evaluated again when it arrives.
  if (!isRecord(policyObject)) return [];
  const policyFacts = readBoundPolicy(policyObject as KubernetesObject, policyName);
  const applied = narrow(policyFacts.match, bindingMatch);

  const strongest = ACTION_OUTCOMES[actions[0]];
  const binding = objectName(source.name, null);
  const policy = objectName(policyName, null);
  const policySource: SourceObject = {
    kind: POLICY_KIND,
    apiVersion: typeof policyObject.apiVersion === 'string' ? policyObject.apiVersion : `${GROUP}/v1`,
    name: policyName,
    namespace: null,
  };
  const requests: Text =
    applied.targets.length === 0
      ? text`no requests`
      : text`${describeOperations(applied.operations)} requests for ${detail(describeTargets(applied.targets), 'matching resources')}`;
  const messages: Text =
    policyFacts.messages.length > 0
      ? text`: ${detail(policyFacts.messages.join('; '), 'validation messages hidden')}`
      : text` (${String(policyFacts.validationCount)} validation rule${policyFacts.validationCount === 1 ? '' : 's'})`;
  const summary = text`${BINDING_KIND} "${binding}" ${strongest.verb} ${requests} that fail ${POLICY_KIND} "${policy}"${messages}`;
  const remediationHint: Text =
    actions[0] === 'Deny'
      ? text`change your object to pass ${POLICY_KIND} "${policy}", or the API server rejects it`
      : actions[0] === 'Warn'
        ? text`fix what the warnings of ${POLICY_KIND} "${policy}" point at before it is enforced`
        : text`violations of ${POLICY_KIND} "${policy}" are only recorded in the audit log; fix them before it is enforced`;
  const params = paramSourceOf(policyObject as KubernetesObject, spec);
  const scope: NamespaceScope = applied.clusterScopedOnly
    ? { kind: 'none', reason: 'its rules have scope Cluster' }
    : applied.namespaceSelector
      ? { kind: 'cluster', namespaceSelector: applied.namespaceSelector }
      : { kind: 'cluster' };

  return [
    {
      id: 'binding',
      name: source.name,
      displayName: [binding],
      type: 'Admission',
      severity: strongest.severity,
      effect: strongest.effect,
      adapter: 'admissionpolicy',
      source,
      scope,
      ...(applied.objectSelector ? { workloadSelector: applied.objectSelector } : {}),
      resourceTargets: applied.targets,
      tags: ['admission', 'admission-policy', ...actions.map((action) => action.toLowerCase())],
      ...(params ? { relatedSources: [params] } : {}),
      summary,
      remediationHint,
      remediation: {
        summary: remediationHint,
        steps: [
          inspectSourceStep(policySource, 'validatingadmissionpolicy'),
          inspectSourceStep(source, 'validatingadmissionpolicybinding'),
          askOwnerStep(
            text`Ask the cluster admins to exempt your workload from ${BINDING_KIND} "${binding}", or to change ${POLICY_KIND} "${policy}", if it blocks a change you need`,
            'cluster-admin',
          ),
        ],
      },
    },
  ];
}

export function admissionPolicyToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  if (object.kind === POLICY_KIND) {
    // Read anyway so a malformed policy is counted as a parse error of its own.
    sourceOf(object, false);
    readPolicy(object);
    return [];
  }
  if (object.kind === BINDING_KIND) return bindingToConstraints(object, context);
  throw new AdapterParseError(`kind ${JSON.stringify(object.kind)} is not ${POLICY_KIND} or ${BINDING_KIND}`);
}

export const admissionPolicyAdapter: Adapter = {
  name: 'admissionpolicy',
  kinds: POLICY_SOURCE_KINDS.admissionpolicy.kinds,
  retainedKinds: [
    { group: GROUP, kind: POLICY_KIND },
    { group: GROUP, kind: BINDING_KIND },
  ],
  toConstraints: (object, context) => admissionPolicyToConstraints(object, context),
};
