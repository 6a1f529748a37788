import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type ConstraintDraft,
  type NamespaceScope,
  type SourceObject,
} from '../../../model/constraint';
import type { LabelSelector } from '../../../model/kubernetes';
import type { KubernetesObject } from '../../../model/kubernetes';
import { isEmptySelector } from '../../../model/label-selector';
import { joinText, objectName, text, type Text } from '../../../model/text';
import { readRecord, readSelector, requireSpec, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { clusterScope, podsText, quoted, scopeText } from '../shared/scope-text';
import { readAnpRules, type AnpAction, type AnpDirection, type AnpRule } from './anp-rules';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';
import { networkDirectionDraft } from '../shared/network-direction';

// policy.networking.k8s.io AdminNetworkPolicy (ANP) and BaselineAdminNetworkPolicy (BANP), both
// cluster-scoped → one NetworkIngress / NetworkEgress constraint per direction with rules. Neither
// isolates pods by itself: only traffic its rules match is decided. ANP decides before any
// NetworkPolicy (Allow and Deny cannot be overridden by developers; Pass hands over to them); BANP
// decides after them, so a developer's own NetworkPolicy can open what a BANP Deny closes.

const ANP_KIND = 'AdminNetworkPolicy';
const BANP_KIND = 'BaselineAdminNetworkPolicy';
const DIRECTIONS: readonly AnpDirection[] = ['ingress', 'egress'];
const DESCRIBED_RULES = 3;

interface Subject {
  scope: NamespaceScope;
  podSelector: LabelSelector | undefined;
}

function readSubject(spec: Record<string, unknown>): Subject {
  const subject = readRecord(spec.subject, 'spec.subject');
  if ((subject.namespaces === undefined) === (subject.pods === undefined))
    throw new AdapterParseError('spec.subject must set exactly one of namespaces and pods');
  if (subject.namespaces !== undefined) {
    const namespaces = readSelector(subject.namespaces, 'spec.subject.namespaces');
    return { scope: clusterScope(undefined, undefined, namespaces), podSelector: undefined };
  }
  const pods = readRecord(subject.pods, 'spec.subject.pods');
  const namespaces = readSelector(pods.namespaceSelector, 'spec.subject.pods.namespaceSelector');
  const podSelector = readSelector(pods.podSelector, 'spec.subject.pods.podSelector');
  return {
    scope: clusterScope(undefined, undefined, namespaces),
    podSelector: isEmptySelector(podSelector) ? undefined : podSelector,
  };
}

function readPriority(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 1000)
    throw new AdapterParseError(`spec.priority is ${quoted(value)}, expected an integer from 0 to 1000`);
  return value;
}

function describeRules(rules: readonly AnpRule[]): Text {
  const shown = rules.slice(0, DESCRIBED_RULES).map((rule) => rule.description);
  const more = rules.length - shown.length;
  return more > 0 ? [...joinText(shown, '; '), `; and ${more} more`] : joinText(shown, '; ');
}

/** Deny rules decide before any NetworkPolicy in an ANP (Critical) and after them in a BANP (Warning). */
function outcomeOf(
  rules: readonly AnpRule[],
  baseline: boolean,
): { denies: boolean; severity: Severity; effect: Effect } {
  const denies = rules.some((rule) => rule.action === 'Deny');
  return {
    denies,
    severity: denies ? (baseline ? 'Warning' : 'Critical') : 'Info',
    effect: denies ? 'deny' : 'restrict',
  };
}

/** What one direction's rules do, in the order they decide: Deny first, as it is what surprises. */
function describeActions(rules: readonly AnpRule[], direction: AnpDirection): Text[] {
  const peerWord = direction === 'ingress' ? 'from' : 'to';
  return (['Deny', 'Allow', 'Pass'] as const)
    .map((action) => ({ action, matching: rules.filter((rule) => rule.action === action) }))
    .filter(({ matching }) => matching.length > 0)
    .map(({ action, matching }) =>
      action === 'Pass'
        ? text`leaves ${direction} ${peerWord} ${describeRules(matching)} to NetworkPolicies`
        : text`${action === 'Deny' ? 'denies' : 'allows'} ${direction} ${peerWord}: ${describeRules(matching)}`,
    );
}

function buildConstraint(
  source: SourceObject,
  subject: Subject,
  priority: number | undefined,
  direction: AnpDirection,
  rules: readonly AnpRule[],
  bothDirections: boolean,
): ConstraintDraft {
  const baseline = source.kind === BANP_KIND;
  const policy = objectName(source.name, null);
  const outcome = outcomeOf(rules, baseline);
  // Priority says which admin policy decides first: precedence, not a rule detail.
  const priorityText = priority === undefined ? '' : ` (priority ${priority})`;
  const summary = text`${source.kind} "${policy}"${priorityText} for ${podsText(subject.podSelector)} ${scopeText(subject.scope)} ${joinText(describeActions(rules, direction), '; ')}`;
  const remediationHint = !outcome.denies
    ? text`nothing to change: ${source.kind} "${policy}" denies no ${direction} traffic`
    : baseline
      ? text`add a NetworkPolicy in your namespace that allows the ${direction} traffic you need; ${source.kind} "${policy}" denies it only where no NetworkPolicy decides`
      : text`ask the cluster admins to allow the ${direction} traffic your pods need; no NetworkPolicy can override ${source.kind} "${policy}"`;
  return networkDirectionDraft(
    { source, policy, direction, bothDirections },
    {
      adapter: 'adminnetworkpolicy',
      severity: outcome.severity,
      effect: outcome.effect,
      scope: subject.scope,
      tags: [
        'network',
        baseline ? 'baseline-admin-network-policy' : 'admin-network-policy',
        direction,
        ...(outcome.denies ? ['deny-rules'] : []),
        ...(rules.some((rule) => rule.action === 'Pass') ? ['pass'] : []),
        'clusterwide',
      ],
      summary,
      remediationHint,
      steps: [
        inspectSourceStep(source, baseline ? 'baselineadminnetworkpolicy' : 'adminnetworkpolicy'),
        askOwnerStep(
          text`Ask the cluster admins who own ${source.kind} "${policy}" to allow the ${direction} traffic your workload needs (peer and port)`,
          'cluster-admin',
        ),
      ],
      workloadSelector: subject.podSelector,
    },
  );
}

export function adminNetworkPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (object.kind !== ANP_KIND && object.kind !== BANP_KIND)
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not an (Baseline)AdminNetworkPolicy`);
  const source = sourceOf(object, false);
  const spec = requireSpec(object);
  const baseline = object.kind === BANP_KIND;
  const priority = baseline ? undefined : readPriority(spec.priority);
  const subject = readSubject(spec);
  const actions: readonly AnpAction[] = baseline ? ['Allow', 'Deny'] : ['Allow', 'Deny', 'Pass'];
  const perDirection = DIRECTIONS.map((direction) => ({
    direction,
    rules: readAnpRules(spec[direction], `spec.${direction}`, direction, actions),
  })).filter(({ rules }) => rules.length > 0);
  return perDirection.map(({ direction, rules }) =>
    buildConstraint(source, subject, priority, direction, rules, perDirection.length > 1),
  );
}

export const adminNetworkPolicyAdapter: Adapter = {
  name: 'adminnetworkpolicy',
  kinds: POLICY_SOURCE_KINDS.adminnetworkpolicy.kinds,
  toConstraints: (object) => adminNetworkPolicyToConstraints(object),
};
