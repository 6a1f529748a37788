import type { Effect } from '../../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type ConstraintDraft,
  type SourceObject,
} from '../../../model/constraint';
import type { KubernetesObject, LabelSelector } from '../../../model/kubernetes';
import { formatLabelSelector } from '../../../model/label-selector';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { joinLimited, joinLimitedStrings } from '../../../model/summary-rules';
import { detail, joinText, namespaceName, objectName, text, type Text } from '../../../model/text';
import {
  readRecord,
  readRecordList,
  readSelector,
  readStringList,
  requireSpec,
  namespacedSourceOf,
} from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// networking.k8s.io/v1 NetworkPolicy → one NetworkIngress / NetworkEgress constraint per direction.

type Direction = 'Ingress' | 'Egress';

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function directionsOf(spec: Record<string, unknown>): Direction[] {
  const policyTypes = readStringList(spec.policyTypes, 'spec.policyTypes');
  if (policyTypes.length === 0) return spec.egress === undefined ? ['Ingress'] : ['Ingress', 'Egress'];
  return policyTypes.map((policyType) => {
    if (policyType !== 'Ingress' && policyType !== 'Egress')
      throw new AdapterParseError(
        `spec.policyTypes has ${JSON.stringify(policyType)}, expected Ingress or Egress`,
      );
    return policyType;
  });
}

/** Describes one peer of a rule: pods, namespaces or an IP block. */
function describePeer(peer: Record<string, unknown>, where: string, ownNamespace: string): Text {
  if (peer.ipBlock !== undefined) {
    const ipBlock = readRecord(peer.ipBlock, `${where}.ipBlock`);
    if (typeof ipBlock.cidr !== 'string')
      throw new AdapterParseError(`${where}.ipBlock.cidr must be a string`);
    const except = readStringList(ipBlock.except, `${where}.ipBlock.except`);
    return [
      detail(except.length > 0 ? `${ipBlock.cidr} except ${except.join(', ')}` : ipBlock.cidr, 'an IP range'),
    ];
  }
  const parts: Text[] = [];
  if (peer.namespaceSelector !== undefined) {
    const selector = readSelector(peer.namespaceSelector, `${where}.namespaceSelector`);
    parts.push(describeNamespaces(selector));
  }
  if (peer.podSelector !== undefined) {
    const selector = readSelector(peer.podSelector, `${where}.podSelector`);
    const formatted = formatLabelSelector(selector);
    parts.push([detail(formatted === 'all pods' ? 'any pod' : `pods ${formatted}`, 'selected pods')]);
  }
  if (parts.length === 0)
    throw new AdapterParseError(`${where} names no podSelector, namespaceSelector or ipBlock`);
  if (peer.namespaceSelector === undefined) parts.push(text`in ${namespaceName(ownNamespace)}`);
  return joinText(parts, ' ');
}

/** A namespace selector naming namespaces shows them as names (redactable); others as a detail. */
function describeNamespaces(selector: LabelSelector): Text {
  const named = selector.matchLabels?.[NAMESPACE_NAME_LABEL];
  const otherLabels = Object.keys(selector.matchLabels ?? {}).filter((key) => key !== NAMESPACE_NAME_LABEL);
  if (named !== undefined && otherLabels.length === 0 && (selector.matchExpressions ?? []).length === 0)
    return text`namespace ${namespaceName(named)}`;
  const formatted = formatLabelSelector(selector);
  return [
    detail(formatted === 'all pods' ? 'any namespace' : `namespaces ${formatted}`, 'selected namespaces'),
  ];
}

function describePorts(rule: Record<string, unknown>, where: string): Text {
  const ports = readRecordList(rule.ports, `${where}.ports`);
  if (ports.length === 0) return [];
  const formatted = ports.map((port, index) => {
    const protocol = port.protocol ?? 'TCP';
    if (typeof protocol !== 'string')
      throw new AdapterParseError(`${where}.ports[${index}].protocol must be TCP, UDP or SCTP`);
    if (port.port !== undefined && typeof port.port !== 'number' && typeof port.port !== 'string')
      throw new AdapterParseError(`${where}.ports[${index}].port must be a number or a name`);
    const range =
      port.endPort !== undefined
        ? `${String(port.port)}-${String(port.endPort)}`
        : String(port.port ?? 'any');
    return `${String(protocol)}/${range}`;
  });
  return text` on ${detail(joinLimitedStrings(formatted), 'some ports')}`;
}

function describeRules(
  rules: Array<Record<string, unknown>>,
  direction: Direction,
  ownNamespace: string,
): Text {
  const peerField = direction === 'Ingress' ? 'from' : 'to';
  const described = rules.map((rule, ruleIndex) => {
    const where = `spec.${direction.toLowerCase()}[${ruleIndex}]`;
    const peers = readRecordList(rule[peerField], `${where}.${peerField}`);
    const peerText =
      peers.length === 0
        ? text`any peer`
        : joinLimited(
            peers.map((peer, peerIndex) =>
              describePeer(peer, `${where}.${peerField}[${peerIndex}]`, ownNamespace),
            ),
            ' or ',
            3,
            'peer',
          );
    return [...peerText, ...describePorts(rule, where)];
  });
  return joinLimited(described, '; ', 3, 'rule');
}

/** A rule with no peers and no ports admits every peer on every port: the direction is open. */
function allowsAll(rules: Array<Record<string, unknown>>, direction: Direction): boolean {
  const peerField = direction === 'Ingress' ? 'from' : 'to';
  return rules.some(
    (rule) =>
      (rule[peerField] === undefined ||
        rule[peerField] === null ||
        (rule[peerField] as unknown[]).length === 0) &&
      (rule.ports === undefined || rule.ports === null || (rule.ports as unknown[]).length === 0),
  );
}

function buildConstraint(
  source: SourceObject & { namespace: string },
  direction: Direction,
  rules: Array<Record<string, unknown>>,
  podSelector: LabelSelector,
  bothDirections: boolean,
): ConstraintDraft {
  const lower = direction.toLowerCase();
  const name = bothDirections ? `${source.name}/${lower}` : source.name;
  const effect: Effect = rules.length === 0 ? 'deny' : 'restrict';
  const policy = objectName(source.name, source.namespace);
  const selected = formatLabelSelector(podSelector);
  const pods = detail(selected === 'all pods' ? selected : `pods ${selected}`, 'selected pods');
  const namespace = namespaceName(source.namespace);
  // An open direction restricts nothing (DESIGN.md section 3): Info, and said plainly.
  const open = effect === 'restrict' && allowsAll(rules, direction);
  const summary =
    effect === 'deny'
      ? text`NetworkPolicy "${policy}" denies all ${lower} traffic for ${pods} in ${namespace}`
      : open
        ? text`NetworkPolicy "${policy}" allows all ${lower} traffic for ${pods} in ${namespace}; nothing is restricted`
        : text`NetworkPolicy "${policy}" allows ${lower} for ${pods} only ${direction === 'Ingress' ? 'from' : 'to'}: ${describeRules(rules, direction, source.namespace)}`;
  const peerWord = direction === 'Ingress' ? 'sources' : 'destinations';
  const remediationHint =
    effect === 'deny'
      ? text`add a NetworkPolicy in ${namespace} that allows the ${lower} traffic your pods need`
      : open
        ? text`nothing to do: NetworkPolicy "${policy}" allows all ${lower} traffic for these pods`
        : text`send ${lower} traffic only to/from the allowed ${peerWord} and ports, or extend NetworkPolicy "${policy}"`;
  return {
    id: lower,
    name,
    displayName: bothDirections ? text`${policy}/${lower}` : [policy],
    type: direction === 'Ingress' ? 'NetworkIngress' : 'NetworkEgress',
    severity: open ? 'Info' : 'Warning',
    effect,
    adapter: 'networkpolicy',
    source,
    scope: { kind: 'namespace', namespace: source.namespace },
    workloadSelector: podSelector,
    resourceTargets: [...WORKLOAD_RESOURCES],
    tags: ['network', lower, effect === 'deny' ? 'default-deny' : open ? 'allow-all' : 'allow-list'],
    summary,
    remediationHint,
    remediation: {
      summary: remediationHint,
      steps: [
        inspectSourceStep(source, 'networkpolicy'),
        askOwnerStep(
          text`Ask the owner of namespace ${namespace} to allow the ${lower} traffic your workload needs (peer and port)`,
          'namespace-admin',
        ),
      ],
    },
  };
}

export function networkPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  const source = namespacedSourceOf(object);
  const spec = requireSpec(object);
  const podSelector = readSelector(spec.podSelector, 'spec.podSelector');
  const directions = directionsOf(spec);
  return directions.map((direction) => {
    const field = direction === 'Ingress' ? 'ingress' : 'egress';
    const rules = readRecordList(spec[field], `spec.${field}`);
    return buildConstraint(source, direction, rules, podSelector, directions.length > 1);
  });
}

export const networkPolicyAdapter: Adapter = {
  name: 'networkpolicy',
  kinds: POLICY_SOURCE_KINDS.networkpolicy.kinds,
  toConstraints: (object) => networkPolicyToConstraints(object),
};
