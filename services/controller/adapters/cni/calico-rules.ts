import { AdapterParseError } from '../../../model/constraint';
import { CalicoSelectorError } from '../../../model/calico-selector';
import { isRecord } from '../../../model/kubernetes';
import {
  calicoSelector,
  formatSelector,
  selectsEverything,
  type CalicoExpressionSelector,
} from '../../../model/selector';
import { detail, joinText, namespaceName, objectName, text, type Text } from '../../../model/text';
import { readRecord, readStringList } from '../shared/object-fields';
import { quoted, readChoice } from '../shared/scope-text';

// One Calico rule (projectcalico.org/v3 `Rule`): its action, and what traffic it matches, read from
// `protocol`, `icmp`, `ipVersion`, `http` and the `source`/`destination` entity rules (nets,
// selectors, namespace selectors, service accounts, services, ports and named ports).

export const CALICO_ACTIONS = ['Allow', 'Deny', 'Log', 'Pass'] as const;
export type CalicoAction = (typeof CALICO_ACTIONS)[number];
export type CalicoDirection = 'ingress' | 'egress';

export interface CalicoRule {
  action: CalicoAction;
  /** Matches every packet: no protocol, no entity criteria. */
  matchesEverything: boolean;
  /** `TCP from pods app == 'web' in shop on 8080` (details redactable). */
  description: Text;
}

const ENTITY_FIELDS = [
  'nets',
  'notNets',
  'selector',
  'notSelector',
  'namespaceSelector',
  'ports',
  'notPorts',
  'serviceAccounts',
  'services',
];
const RULE_CRITERIA = ['protocol', 'notProtocol', 'icmp', 'notICMP', 'ipVersion', 'http'];

/** A Calico selector field, parsed; a syntax error is the object's parse error. */
export function readCalicoSelector(value: unknown, where: string): CalicoExpressionSelector {
  if (typeof value !== 'string') throw new AdapterParseError(`${where} must be a selector string`);
  try {
    return calicoSelector(value);
  } catch (error) {
    if (error instanceof CalicoSelectorError) throw new AdapterParseError(`${where}: ${error.message}`);
    throw error;
  }
}

/** `80`, `8080:8090` (a range) or a named port; protocol is the rule's. */
function readPorts(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AdapterParseError(`${where} must be a list of ports`);
  return value.map((port, index) => {
    if (typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535) return String(port);
    if (typeof port === 'string' && port !== '') return port;
    throw new AdapterParseError(`${where}[${index}] is ${quoted(port)}, expected a port, range or port name`);
  });
}

function protocolOf(rule: Record<string, unknown>, where: string): string | undefined {
  for (const field of ['protocol', 'notProtocol']) {
    const value = rule[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new AdapterParseError(`${where}.${field} must be a protocol name or number`);
    return field === 'protocol' ? String(value) : `not ${String(value)}`;
  }
  return undefined;
}

function selectorText(selector: CalicoExpressionSelector, negated: boolean): Text {
  const formatted = formatSelector(selector);
  return [detail(`${negated ? 'pods not matching ' : 'pods '}${formatted}`, 'selected pods')];
}

/** What one entity rule (`source` or `destination`) names, each part redactable. */
function describeEntity(entity: Record<string, unknown>, where: string, ownNamespace: string | null): Text[] {
  const parts: Text[] = [];
  const nets = readStringList(entity.nets, `${where}.nets`);
  if (nets.length > 0) parts.push([detail(nets.join(', '), 'some IP ranges')]);
  const notNets = readStringList(entity.notNets, `${where}.notNets`);
  if (notNets.length > 0) parts.push([detail(`anything but ${notNets.join(', ')}`, 'some IP ranges')]);
  const pods: Text[] = [];
  if (entity.selector !== undefined)
    pods.push(selectorText(readCalicoSelector(entity.selector, `${where}.selector`), false));
  if (entity.notSelector !== undefined)
    pods.push(selectorText(readCalicoSelector(entity.notSelector, `${where}.notSelector`), true));
  if (entity.namespaceSelector !== undefined) {
    const namespaces = readCalicoSelector(entity.namespaceSelector, `${where}.namespaceSelector`);
    const scope = selectsEverything(namespaces)
      ? text`in any namespace`
      : text`in namespaces ${detail(formatSelector(namespaces), 'as selected')}`;
    pods.push(pods.length === 0 ? text`pods ${scope}` : scope);
  } else if (pods.length > 0 && ownNamespace !== null) pods.push(text`in ${namespaceName(ownNamespace)}`);
  if (pods.length > 0) parts.push(joinText(pods, ' '));
  if (entity.serviceAccounts !== undefined) {
    const accounts = readRecord(entity.serviceAccounts, `${where}.serviceAccounts`);
    const names = readStringList(accounts.names, `${where}.serviceAccounts.names`);
    const described = names.length > 0 ? [names.join(', ')] : [];
    if (accounts.selector !== undefined)
      described.push(
        formatSelector(readCalicoSelector(accounts.selector, `${where}.serviceAccounts.selector`)),
      );
    parts.push([detail(`service accounts ${described.join(' or ') || 'any'}`, 'selected service accounts')]);
  }
  if (entity.services !== undefined) {
    const service = readRecord(entity.services, `${where}.services`);
    if (typeof service.name !== 'string' || service.name === '')
      throw new AdapterParseError(`${where}.services.name must be a non-empty string`);
    const namespace = typeof service.namespace === 'string' ? service.namespace : ownNamespace;
    parts.push(text`Service "${objectName(service.name, namespace)}"`);
  }
  return parts;
}

function portsText(entity: Record<string, unknown>, where: string, protocol: string | undefined): Text {
  const ports = readPorts(entity.ports, `${where}.ports`);
  const notPorts = readPorts(entity.notPorts, `${where}.notPorts`);
  const prefix = protocol !== undefined && !protocol.startsWith('not ') ? `${protocol}/` : '';
  const listed = [
    ...ports.map((port) => `${prefix}${port}`),
    ...notPorts.map((port) => `not ${prefix}${port}`),
  ];
  return listed.length > 0 ? text` on ${detail(listed.join(', '), 'some ports')}` : [];
}

function readEntity(rule: Record<string, unknown>, field: 'source' | 'destination', where: string) {
  const value = rule[field];
  if (value === undefined || value === null) return {};
  const entity = readRecord(value, `${where}.${field}`);
  for (const [key, entry] of Object.entries(entity))
    if (!ENTITY_FIELDS.includes(key) && entry !== undefined && entry !== null)
      throw new AdapterParseError(`${where}.${field}.${key} is not a Calico entity rule field`);
  return entity;
}

function hasEntries(entity: Record<string, unknown>): boolean {
  return Object.values(entity).some((value) => value !== undefined && value !== null);
}

export function readCalicoRule(
  value: unknown,
  where: string,
  direction: CalicoDirection,
  ownNamespace: string | null,
): CalicoRule {
  if (!isRecord(value)) throw new AdapterParseError(`${where} must be an object`);
  const action = readChoice(value.action, `${where}.action`, CALICO_ACTIONS, 'Allow');
  if (value.action === undefined) throw new AdapterParseError(`${where}.action is required`);
  const protocol = protocolOf(value, where);
  const source = readEntity(value, 'source', where);
  const destination = readEntity(value, 'destination', where);
  // The peer is the source of ingress and the destination of egress; the other side is the
  // selected pod itself, where only its ports narrow the rule.
  const [peer, peerField, local, localField] =
    direction === 'ingress'
      ? [source, 'source', destination, 'destination']
      : [destination, 'destination', source, 'source'];
  const peerParts = describeEntity(peer, `${where}.${peerField}`, ownNamespace);
  describeEntity(local, `${where}.${localField}`, ownNamespace);
  const peerText = peerParts.length > 0 ? joinText(peerParts, ' and ') : text`any peer`;
  const ports = portsText(destination, `${where}.destination`, protocol);
  portsText(source, `${where}.source`, protocol); // validated; source ports are not described
  const protocolText =
    protocol !== undefined && ports.length === 0 ? text` (${detail(protocol, 'some protocols')})` : [];
  const http =
    value.http !== undefined && value.http !== null ? text` (${detail('HTTP match', 'HTTP match')})` : [];
  return {
    action,
    matchesEverything:
      RULE_CRITERIA.every((field) => value[field] === undefined || value[field] === null) &&
      !hasEntries(source) &&
      !hasEntries(destination),
    description: [...peerText, ...ports, ...protocolText, ...http],
  };
}
