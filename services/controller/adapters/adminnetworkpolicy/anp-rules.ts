import { AdapterParseError } from '../../../model/constraint';
import type { LabelSelector } from '../../../model/kubernetes';
import { formatLabelSelector, isEmptySelector } from '../../../model/label-selector';
import { detail, joinText, namespaceName, text, type Text } from '../../../model/text';
import { readRecord, readRecordList, readSelector, readStringList } from '../shared/object-fields';
import { quoted, readChoice } from '../shared/scope-text';

// The rules of AdminNetworkPolicy and BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1):
// an action, peers (`from` / `to`: namespaces, pods, and for egress nodes, networks, domainNames) and
// ports (portNumber, namedPort, portRange). A rule without ports matches every port.

export type AnpDirection = 'ingress' | 'egress';
export type AnpAction = 'Allow' | 'Deny' | 'Pass';

export interface AnpRule {
  action: AnpAction;
  /** `pods app=web in namespaces team=a on TCP/80` (details redactable). */
  description: Text;
}

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function selectorText(selector: LabelSelector, noun: 'pods' | 'nodes'): Text {
  if (isEmptySelector(selector)) return text`${noun === 'pods' ? 'any pod' : 'any node'}`;
  return [detail(`${noun} ${formatLabelSelector(selector)}`, `selected ${noun}`)];
}

/** Namespaces chosen by name show the name (redactable per viewer); others the selector as a detail. */
function namespacesText(selector: LabelSelector): Text {
  if (isEmptySelector(selector)) return text`any namespace`;
  const named = selector.matchLabels?.[NAMESPACE_NAME_LABEL];
  if (
    named !== undefined &&
    Object.keys(selector.matchLabels ?? {}).length === 1 &&
    !selector.matchExpressions?.length
  )
    return text`namespace ${namespaceName(named)}`;
  return [detail(`namespaces ${formatLabelSelector(selector)}`, 'selected namespaces')];
}

function describePeer(peer: Record<string, unknown>, where: string, direction: AnpDirection): Text {
  const fields = Object.keys(peer).filter((key) => peer[key] !== undefined && peer[key] !== null);
  if (fields.length !== 1)
    throw new AdapterParseError(
      `${where} must set exactly one of namespaces, pods, nodes, networks, domainNames`,
    );
  const [field] = fields;
  switch (field) {
    case 'namespaces':
      return namespacesText(readSelector(peer.namespaces, `${where}.namespaces`));
    case 'pods': {
      const pods = readRecord(peer.pods, `${where}.pods`);
      const podSelector = readSelector(pods.podSelector, `${where}.pods.podSelector`);
      const namespaces = readSelector(pods.namespaceSelector, `${where}.pods.namespaceSelector`);
      const podText = isEmptySelector(podSelector) ? text`pods` : selectorText(podSelector, 'pods');
      return text`${podText} in ${namespacesText(namespaces)}`;
    }
    case 'nodes':
    case 'networks':
    case 'domainNames':
      if (direction === 'ingress') throw new AdapterParseError(`${where}.${field} is only allowed in egress`);
      if (field === 'nodes') return selectorText(readSelector(peer.nodes, `${where}.nodes`), 'nodes');
      return [
        detail(
          readStringList(peer[field], `${where}.${field}`).join(', '),
          field === 'networks' ? 'some IP ranges' : 'some hosts',
        ),
      ];
    default:
      throw new AdapterParseError(`${where}.${field} is not an AdminNetworkPolicy peer`);
  }
}

function readPortNumber(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535)
    throw new AdapterParseError(`${where} is ${quoted(value)}, expected a port number`);
  return value;
}

function describePort(port: Record<string, unknown>, where: string): string {
  if (typeof port.namedPort === 'string' && port.namedPort !== '') return port.namedPort;
  const protocolOf = (value: Record<string, unknown>) =>
    readChoice(value.protocol, `${where}.protocol`, ['TCP', 'UDP', 'SCTP'] as const, 'TCP');
  if (port.portNumber !== undefined) {
    const number = readRecord(port.portNumber, `${where}.portNumber`);
    return `${protocolOf(number)}/${readPortNumber(number.port, `${where}.portNumber.port`)}`;
  }
  if (port.portRange !== undefined) {
    const range = readRecord(port.portRange, `${where}.portRange`);
    const start = readPortNumber(range.start, `${where}.portRange.start`);
    const end = readPortNumber(range.end, `${where}.portRange.end`);
    if (end < start) throw new AdapterParseError(`${where}.portRange ends before it starts`);
    return `${protocolOf(range)}/${start}-${end}`;
  }
  throw new AdapterParseError(`${where} must set portNumber, namedPort or portRange`);
}

export function readAnpRules(
  value: unknown,
  where: string,
  direction: AnpDirection,
  actions: readonly AnpAction[],
): AnpRule[] {
  const peerField = direction === 'ingress' ? 'from' : 'to';
  return readRecordList(value, where).map((rule, index) => {
    const ruleWhere = `${where}[${index}]`;
    if (rule.action === undefined) throw new AdapterParseError(`${ruleWhere}.action is required`);
    const action = readChoice(rule.action, `${ruleWhere}.action`, actions, actions[0]);
    const peers = readRecordList(rule[peerField], `${ruleWhere}.${peerField}`);
    if (peers.length === 0) throw new AdapterParseError(`${ruleWhere}.${peerField} needs at least one peer`);
    const peerText = joinText(
      peers.map((peer, peerIndex) =>
        describePeer(peer, `${ruleWhere}.${peerField}[${peerIndex}]`, direction),
      ),
      ' or ',
    );
    const ports = readRecordList(rule.ports, `${ruleWhere}.ports`).map((port, portIndex) =>
      describePort(port, `${ruleWhere}.ports[${portIndex}]`),
    );
    const portText = ports.length > 0 ? text` on ${detail(ports.join(', '), 'some ports')}` : [];
    return { action, description: [...peerText, ...portText] };
  });
}
