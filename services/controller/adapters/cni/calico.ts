import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type ConstraintDraft,
  type NamespaceScope,
  type SourceObject,
} from '../../../model/constraint';
import { selectsOnlyGlobal } from '../../../model/calico-selector';
import { groupOf, type KubernetesObject } from '../../../model/kubernetes';
import { selectsEverything, type CalicoExpressionSelector } from '../../../model/selector';
import { joinText, objectName, text, type Text } from '../../../model/text';
import { readCalicoRule, readCalicoSelector, type CalicoDirection, type CalicoRule } from './calico-rules';
import { readList, readStringList, requireSpec, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep, ownerPrivilege } from '../shared/remediation';
import { clusterScope, podsText, quoted, scopeText } from '../shared/scope-text';
import { networkDirectionDraft } from '../shared/network-direction';

// Calico NetworkPolicy (namespaced) and GlobalNetworkPolicy (cluster-scoped), served as
// projectcalico.org/v3 by the Calico API server or as crd.projectcalico.org/v1 CRDs → one
// NetworkIngress / NetworkEgress constraint per direction in `types`. Rules are ordered: the first
// Allow, Deny or Pass that matches decides, Log continues; traffic no rule decides is dropped at the
// end of the tier. So a direction with no deciding rule denies all traffic.

export const CALICO_NAMESPACED_KIND = 'NetworkPolicy';
export const CALICO_GLOBAL_KIND = 'GlobalNetworkPolicy';

/** Rules described in a summary; the rest are counted, so a summary stays one short line. */
const DESCRIBED_RULES = 3;

interface DirectionPlan {
  direction: CalicoDirection;
  /** The rules that can be reached: those after a rule matching everything never are. */
  rules: CalicoRule[];
  /** The last reachable rule matches everything and decides (Allow, Deny or Pass). */
  catchAll: CalicoRule | undefined;
}

/** Calico's default when `types` is absent: Egress only if there are egress rules and no ingress. */
function directionsOf(spec: Record<string, unknown>): CalicoDirection[] {
  const types = readStringList(spec.types, 'spec.types');
  if (types.length === 0) {
    const hasIngress = readList(spec.ingress, 'spec.ingress').length > 0;
    const hasEgress = readList(spec.egress, 'spec.egress').length > 0;
    if (hasEgress && !hasIngress) return ['egress'];
    return hasEgress ? ['ingress', 'egress'] : ['ingress'];
  }
  return types.map((type, index) => {
    if (type !== 'Ingress' && type !== 'Egress')
      throw new AdapterParseError(`spec.types[${index}] is ${quoted(type)}, expected Ingress or Egress`);
    return type === 'Ingress' ? 'ingress' : 'egress';
  });
}

function planDirection(
  spec: Record<string, unknown>,
  direction: CalicoDirection,
  ownNamespace: string | null,
): DirectionPlan {
  const rules = readList(spec[direction], `spec.${direction}`).map((rule, index) =>
    readCalicoRule(rule, `spec.${direction}[${index}]`, direction, ownNamespace),
  );
  const decisive = rules.findIndex((rule) => rule.action !== 'Log' && rule.matchesEverything);
  return {
    direction,
    rules: decisive === -1 ? rules : rules.slice(0, decisive + 1),
    catchAll: decisive === -1 ? undefined : rules[decisive],
  };
}

function describeRules(rules: readonly CalicoRule[]): Text {
  const shown = rules.slice(0, DESCRIBED_RULES).map((rule) => rule.description);
  const more = rules.length - shown.length;
  return more > 0 ? [...joinText(shown, '; '), `; and ${more} more`] : joinText(shown, '; ');
}

interface Classification {
  severity: Severity;
  effect: Effect;
  tag: string;
  describe: (subject: Text, peerWord: string) => Text;
}

function classify(plan: DirectionPlan): Classification {
  const { direction } = plan;
  const of = (action: CalicoRule['action']) => plan.rules.filter((rule) => rule.action === action);
  const [allow, deny, pass] = [of('Allow'), of('Deny'), of('Pass')];
  if (allow.length + deny.length + pass.length === 0)
    return {
      severity: 'Critical',
      effect: 'deny',
      tag: 'default-deny',
      describe: (subject) => text`${subject} denies all ${direction} traffic`,
    };
  if (deny.length > 0)
    return {
      severity: 'Critical',
      effect: 'deny',
      tag: 'deny-rules',
      describe: (subject, peerWord) =>
        allow.length > 0
          ? text`${subject} denies ${direction} ${peerWord}: ${describeRules(deny)}; allows ${peerWord}: ${describeRules(allow)}`
          : text`${subject} denies ${direction} ${peerWord}: ${describeRules(deny)}`,
    };
  if (plan.catchAll?.action === 'Allow' || allow.length === 0)
    return {
      severity: 'Info',
      effect: 'restrict',
      tag: allow.length === 0 ? 'pass' : 'allow-all',
      describe: (subject) =>
        allow.length === 0
          ? text`${subject} passes ${direction} traffic to the next tier`
          : text`${subject} allows all ${direction} traffic`,
    };
  return {
    severity: 'Warning',
    effect: 'restrict',
    tag: 'allow-list',
    describe: (subject, peerWord) =>
      text`${subject} allows ${direction} only ${peerWord}: ${describeRules(allow)}`,
  };
}

interface PolicyFacts {
  source: SourceObject;
  group: string;
  tier: string;
  order: number | undefined;
  selector: CalicoExpressionSelector;
  serviceAccounts: CalicoExpressionSelector | undefined;
  scope: NamespaceScope;
}

function buildConstraint(facts: PolicyFacts, plan: DirectionPlan, bothDirections: boolean): ConstraintDraft {
  const { source, direction } = { source: facts.source, direction: plan.direction };
  const policy = objectName(source.name, source.namespace);
  const kindText = `Calico ${source.kind}`;
  const subject = text`${kindText} "${policy}" for ${podsText(facts.selector)} ${scopeText(facts.scope)}`;
  const peerWord = direction === 'ingress' ? 'from' : 'to';
  const classification = classify(plan);
  // Tier and order say where the policy stands among others; the tier is a cluster-scoped name.
  const order = facts.order === undefined ? '' : `, order ${facts.order}`;
  const tier = text` (tier "${objectName(facts.tier, null)}"${order})`;
  const summary = [...classification.describe(subject, peerWord), ...tier];
  const remediationHint =
    classification.effect === 'deny'
      ? text`ask the owner of ${kindText} "${policy}" to allow the ${direction} traffic your pods need; a Deny rule or the end of its tier drops it`
      : classification.severity === 'Info'
        ? text`nothing to change: ${kindText} "${policy}" blocks no ${direction} traffic itself; later tiers decide`
        : text`send ${direction} traffic only ${peerWord} the allowed peers and ports, or ask the owner of ${kindText} "${policy}" to extend it`;
  return networkDirectionDraft(
    { source, policy, direction, bothDirections },
    {
      adapter: 'cni',
      severity: classification.severity,
      effect: classification.effect,
      scope: facts.scope,
      tags: [
        'network',
        'calico',
        direction,
        classification.tag,
        ...(source.namespace === null ? ['clusterwide'] : []),
        ...(facts.serviceAccounts ? ['service-account-selector'] : []),
      ],
      summary,
      remediationHint,
      steps: [
        inspectSourceStep(
          source,
          `${source.namespace === null ? 'globalnetworkpolicies' : 'networkpolicies'}.${facts.group}`,
        ),
        askOwnerStep(
          text`Ask the owner of ${kindText} "${policy}" to allow the ${direction} traffic your workload needs (peer and port)`,
          ownerPrivilege(source),
        ),
      ],
      workloadSelector: selectsEverything(facts.selector) ? undefined : facts.selector,
    },
  );
}

function readOrder(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new AdapterParseError(`spec.order is ${quoted(value)}, expected a number`);
  return value;
}

function optionalSelector(value: unknown, where: string): CalicoExpressionSelector | undefined {
  if (value === undefined || value === null) return undefined;
  return readCalicoSelector(value, where);
}

export function calicoPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (object.kind !== CALICO_NAMESPACED_KIND && object.kind !== CALICO_GLOBAL_KIND)
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Calico network policy`);
  const source = sourceOf(object, object.kind === CALICO_NAMESPACED_KIND);
  const spec = requireSpec(object);
  const tier = spec.tier === undefined || spec.tier === null ? 'default' : spec.tier;
  if (typeof tier !== 'string' || tier === '') throw new AdapterParseError('spec.tier must be a tier name');
  const selector =
    optionalSelector(spec.selector, 'spec.selector') ?? readCalicoSelector('', 'spec.selector');
  const namespaceSelector = optionalSelector(spec.namespaceSelector, 'spec.namespaceSelector');
  const facts: PolicyFacts = {
    source,
    group: groupOf(object.apiVersion),
    tier,
    order: readOrder(spec.order),
    selector,
    serviceAccounts: optionalSelector(spec.serviceAccountSelector, 'spec.serviceAccountSelector'),
    scope:
      source.namespace === null
        ? clusterScope(undefined, undefined, namespaceSelector)
        : { kind: 'namespace', namespace: source.namespace },
  };
  const directions = directionsOf(spec);
  const plans = directions.map((direction) => planDirection(spec, direction, source.namespace));
  // Pre-DNAT and untracked policies apply to host endpoints only, as do selectors of global() ones.
  const hostOnly = spec.preDNAT === true || spec.doNotTrack === true;
  if (
    hostOnly ||
    selectsOnlyGlobal(selector.tree) ||
    (namespaceSelector && selectsOnlyGlobal(namespaceSelector.tree))
  )
    return [];
  return plans.map((plan) => buildConstraint(facts, plan, plans.length > 1));
}
