import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type ConstraintDraft,
  type NamespaceScope,
  type SourceObject,
} from '../../../model/constraint';
import { groupOf, type KubernetesObject, type LabelSelector } from '../../../model/kubernetes';
import { formatLabelSelector } from '../../../model/label-selector';
import { joinLimited } from '../../../model/summary-rules';
import { detail, objectName, text, type Text } from '../../../model/text';
import {
  allowsEverything,
  allowsTraffic,
  describeCiliumRule,
  hasLayer7Rules,
  readCiliumRule,
  type CiliumDirection,
  type CiliumRule,
} from './cilium-rules';
import { calicoPolicyToConstraints } from './calico';
import { describeObject, readList, readRecord, requireSpec, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep, ownerPrivilege } from '../shared/remediation';
import { clusterScope, commonValue, podsText, quoted, scopeText, uniqueSorted } from '../shared/scope-text';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';
import { networkDirectionDraft } from '../shared/network-direction';

// CNI network policies: Cilium here, Calico in calico.ts (routed by API group).
// cilium.io/v2 CiliumNetworkPolicy (namespaced) and CiliumClusterwideNetworkPolicy (cluster-scoped)
// → one NetworkIngress / NetworkEgress constraint per direction the policy enforces. The rules of
// `spec` and `specs` are merged per direction, as Cilium ORs them for an endpoint.

const DIRECTIONS: readonly CiliumDirection[] = ['ingress', 'egress'];

const NAMESPACED_KIND = 'CiliumNetworkPolicy';
const CLUSTERWIDE_KIND = 'CiliumClusterwideNetworkPolicy';

interface LocatedRule {
  rule: Record<string, unknown>;
  where: string;
}

/** What the rules of one object do in one direction, merged. */
interface DirectionPlan {
  direction: CiliumDirection;
  allow: LocatedRule[];
  deny: LocatedRule[];
  /** At least one rule puts the selected endpoints into default deny for this direction. */
  defaultDeny: boolean;
  /** The rules' common pod selector; undefined when they differ (then every pod is assumed). */
  podSelector: LabelSelector | undefined;
  podsDescription: Text;
  scope: NamespaceScope;
}

/** Every rule of the object: `spec` and `specs` may both be present and are all enforced. */
function readRules(object: KubernetesObject): Array<CiliumRule | undefined> {
  const hasSpec = object.spec !== undefined && object.spec !== null;
  const specs = readList(object.specs, 'specs');
  if (!hasSpec && specs.length === 0)
    throw new AdapterParseError(`${describeObject(object)} has no spec or specs`);
  const rules = hasSpec ? [readCiliumRule(requireSpec(object), 'spec')] : [];
  specs.forEach((rule, index) =>
    rules.push(readCiliumRule(readRecord(rule, `specs[${index}]`), `specs[${index}]`)),
  );
  return rules;
}

/** Namespaces a clusterwide policy's rules apply in: the union of what each rule admits. */
function mergedClusterScope(rules: readonly CiliumRule[]): NamespaceScope {
  const everyRulePinned = rules.every((rule) => rule.pin.namespaces !== undefined);
  const namespaces = everyRulePinned ? rules.flatMap((rule) => rule.pin.namespaces ?? []) : undefined;
  // A namespace stays excluded only if every rule excludes it.
  const excluded = rules
    .map((rule) => rule.pin.excludedNamespaces)
    .reduce((common, list) => common.filter((namespace) => list.includes(namespace)));
  return clusterScope(namespaces, excluded, commonValue(rules.map((rule) => rule.pin.namespaceSelector)));
}

function describePods(rules: readonly CiliumRule[], common: LabelSelector | undefined): Text {
  if (common !== undefined || rules.length === 0) return podsText(common);
  const selectors = uniqueSorted(rules.map((rule) => formatLabelSelector(rule.podSelector)));
  // One rule selecting every pod makes the union every pod.
  if (selectors.includes('all pods')) return text`all pods`;
  return [detail(`pods ${selectors.join(' or ')}`, 'selected pods')];
}

/** Merges the rules for one direction; undefined when the object does not constrain it. */
function planDirection(
  rules: ReadonlyArray<CiliumRule | undefined>,
  direction: CiliumDirection,
  ownNamespace: string | null,
): DirectionPlan | undefined {
  const contributing = rules.filter(
    (rule): rule is CiliumRule =>
      rule !== undefined &&
      !rule.pin.selectsNoPod &&
      (rule.sections[direction].allow.length > 0 || rule.sections[direction].deny.length > 0),
  );
  const locate = (field: 'allow' | 'deny') =>
    contributing.flatMap((rule) =>
      rule.sections[direction][field].map((entry, index) => ({
        rule: entry,
        where: `${rule.where}.${direction}${field === 'deny' ? 'Deny' : ''}[${index}]`,
      })),
    );
  const allow = locate('allow');
  const deny = locate('deny');
  // Deny rules also switch on default deny (Cilium's docs pair them with an allow-all to avoid it).
  const defaultDeny = contributing.some((rule) => rule.defaultDeny[direction]);
  // Allow rules without default deny only widen what other policies allow: nothing is constrained.
  if (deny.length === 0 && !defaultDeny) return undefined;
  const podSelector = commonValue(contributing.map((rule) => rule.podSelector));
  return {
    direction,
    allow,
    deny,
    defaultDeny,
    podSelector,
    podsDescription: describePods(contributing, podSelector),
    scope:
      ownNamespace === null
        ? mergedClusterScope(contributing)
        : { kind: 'namespace', namespace: ownNamespace },
  };
}

function describeRules(
  rules: readonly LocatedRule[],
  direction: CiliumDirection,
  ownNamespace: string | null,
): Text {
  return joinLimited(
    rules.map((located) => describeCiliumRule(located.rule, direction, located.where, ownNamespace)),
    '; ',
    3,
    'rule',
  );
}

function tagsOf(
  plan: DirectionPlan,
  shape: { deniesAll: boolean; open: boolean; clusterwide: boolean },
): string[] {
  const allRules = [...plan.allow, ...plan.deny].map((located) => located.rule);
  return [
    'network',
    'cilium',
    plan.direction,
    ...(shape.deniesAll ? ['default-deny'] : []),
    ...(plan.deny.length > 0 ? ['deny-rules'] : []),
    ...(!shape.deniesAll && plan.allow.length > 0 ? [shape.open ? 'allow-all' : 'allow-list'] : []),
    ...(shape.clusterwide ? ['clusterwide'] : []),
    ...(hasLayer7Rules(allRules) ? ['l7'] : []),
    ...(allRules.some((rule) => rule.toFQDNs !== undefined) ? ['fqdn'] : []),
  ];
}

function buildConstraint(
  source: SourceObject,
  plan: DirectionPlan,
  bothDirections: boolean,
): ConstraintDraft {
  const { direction } = plan;
  const clusterwide = source.namespace === null;
  const policy = objectName(source.name, source.namespace);
  const peerWord = direction === 'ingress' ? 'from' : 'to';
  const where = scopeText(plan.scope);
  const pods = plan.podsDescription;
  const deniesAll = plan.defaultDeny && !plan.allow.some((located) => allowsTraffic(located.rule, direction));
  const effect: Effect = deniesAll || plan.deny.length > 0 ? 'deny' : 'restrict';
  // An allow-all rule (entities all, no ports) without deny rules restricts nothing: Info.
  const open =
    effect === 'restrict' && plan.allow.some((located) => allowsEverything(located.rule, direction));
  const severity: Severity = effect === 'deny' ? 'Critical' : open ? 'Info' : 'Warning';
  // Described up front even when the summary omits them, so a malformed rule is always reported.
  const allowed = describeRules(plan.allow, direction, source.namespace);
  const denied = describeRules(plan.deny, direction, source.namespace);

  let summary: Text;
  let remediationHint: Text;
  if (deniesAll) {
    const explicitly = plan.deny.length > 0 ? text`, explicitly ${peerWord}: ${denied}` : [];
    summary = text`${source.kind} "${policy}" denies all ${direction} traffic for ${pods} ${where}${explicitly}`;
    remediationHint = clusterwide
      ? text`ask the cluster admins to allow the ${direction} traffic your pods need; ${source.kind} "${policy}" denies all of it`
      : text`add a CiliumNetworkPolicy ${where} that allows the ${direction} traffic your pods need`;
  } else if (plan.deny.length > 0) {
    const alsoAllowed =
      plan.defaultDeny && plan.allow.length > 0 ? text`; allows only ${peerWord}: ${allowed}` : [];
    summary = text`${source.kind} "${policy}" denies ${direction} for ${pods} ${where} ${peerWord}: ${denied}${alsoAllowed}`;
    remediationHint = text`do not rely on the denied ${direction} peers and ports (deny rules override every allow rule), or ask the owner of ${source.kind} "${policy}" to narrow them`;
  } else if (open) {
    summary = text`${source.kind} "${policy}" allows all ${direction} traffic for ${pods} ${where}; nothing is restricted`;
    remediationHint = text`nothing to do: ${source.kind} "${policy}" allows all ${direction} traffic`;
  } else {
    summary = text`${source.kind} "${policy}" allows ${direction} for ${pods} ${where} only ${peerWord}: ${allowed}`;
    remediationHint = text`send ${direction} traffic only ${peerWord} the allowed peers and ports, or extend ${source.kind} "${policy}"`;
  }

  const tags = tagsOf(plan, { deniesAll, open, clusterwide });
  return networkDirectionDraft(
    { source, policy, direction, bothDirections },
    {
      adapter: 'cni',
      severity,
      effect,
      scope: plan.scope,
      tags,
      summary,
      remediationHint,
      steps: [
        inspectSourceStep(source, clusterwide ? 'ciliumclusterwidenetworkpolicy' : 'ciliumnetworkpolicy'),
        askOwnerStep(
          text`Ask the owner of ${source.kind} "${policy}" to allow the ${direction} traffic your workload needs (peer and port)`,
          ownerPrivilege(source),
        ),
      ],
      workloadSelector: plan.podSelector,
    },
  );
}

export function ciliumPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (object.kind !== NAMESPACED_KIND && object.kind !== CLUSTERWIDE_KIND)
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Cilium network policy`);
  const source = sourceOf(object, object.kind === NAMESPACED_KIND);
  const rules = readRules(object);
  const plans = DIRECTIONS.map((direction) => planDirection(rules, direction, source.namespace)).filter(
    (plan): plan is DirectionPlan => plan !== undefined,
  );
  return plans.map((plan) => buildConstraint(source, plan, plans.length > 1));
}

export const cniAdapter: Adapter = {
  name: 'cni',
  kinds: POLICY_SOURCE_KINDS.cni.kinds,
  toConstraints: (object) =>
    groupOf(object.apiVersion) === 'cilium.io'
      ? ciliumPolicyToConstraints(object)
      : calicoPolicyToConstraints(object),
};
