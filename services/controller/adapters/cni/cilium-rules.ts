import { AdapterParseError } from '../../../model/constraint';
import { isRecord, type LabelSelector, type LabelSelectorRequirement } from '../../../model/kubernetes';
import { formatLabelSelector, isEmptySelector } from '../../../model/label-selector';
import { detail, joinText, namespaceName, objectName, text, type Text } from '../../../model/text';
import { readRecord, readRecordList, readSelector, readStringList } from '../shared/object-fields';
import { readRequiredString } from '../shared/scope-text';
import { joinLimited, joinLimitedStrings } from '../../../model/summary-rules';

// Reading and describing the rules of Cilium policies (cilium.io/v2). One object holds one rule in
// `spec` and/or a list in `specs`; each rule selects endpoints and has up to four sections. The
// adapter in cni.ts merges the rules per direction.

export type CiliumDirection = 'ingress' | 'egress';

/** Label of every Cilium endpoint naming its pod's namespace (after the source prefix is stripped). */
const POD_NAMESPACE_KEY = 'io.kubernetes.pod.namespace';
/** Prefix of the labels Cilium copies from the pod's Namespace object onto its endpoint. */
const NAMESPACE_LABELS_PREFIX = 'io.cilium.k8s.namespace.labels.';

/** Peer fields that allow traffic on their own; `fromRequires`/`toRequires` only narrow other rules. */
const PEER_FIELDS: Record<CiliumDirection, readonly string[]> = {
  ingress: ['fromEndpoints', 'fromCIDR', 'fromCIDRSet', 'fromEntities', 'fromGroups', 'fromNodes'],
  egress: [
    'toEndpoints',
    'toCIDR',
    'toCIDRSet',
    'toEntities',
    'toServices',
    'toFQDNs',
    'toGroups',
    'toNodes',
  ],
};

/** Where a clusterwide rule's endpoint selector pins it, taken out of the pod selector. */
export interface NamespacePin {
  namespaces?: string[];
  excludedNamespaces: string[];
  namespaceSelector?: LabelSelector;
  /** `DoesNotExist` on the namespace label: no pod has no namespace, so the rule selects no pod. */
  selectsNoPod: boolean;
}

export interface CiliumRule {
  /** Field path of the rule, `spec` or `specs[2]`, for error messages. */
  where: string;
  /** The endpoint selector as pod labels: source prefixes and namespace conditions removed. */
  podSelector: LabelSelector;
  pin: NamespacePin;
  sections: Record<
    CiliumDirection,
    { allow: Array<Record<string, unknown>>; deny: Array<Record<string, unknown>> }
  >;
  /**
   * `enableDefaultDeny.<direction>: false` (Cilium 1.15+): the rule only adds allowances and never
   * puts the endpoint into default deny for that direction.
   */
  defaultDeny: Record<CiliumDirection, boolean>;
}

/**
 * Cilium writes label keys with a source prefix (`k8s:app`, `any:app`); pods carry plain `app`.
 * Other sources (`reserved:host`, `cidr:`) select non-pod identities and keep their prefix, so they
 * match no pod label: Kubernetes label keys cannot contain `:`.
 */
function podLabelKey(key: string): string {
  return key.replace(/^(k8s|any):/, '');
}

function stripSelectorPrefixes(selector: LabelSelector): LabelSelector {
  const stripped: LabelSelector = {};
  if (selector.matchLabels)
    stripped.matchLabels = Object.fromEntries(
      Object.entries(selector.matchLabels).map(([key, value]) => [podLabelKey(key), value]),
    );
  if (selector.matchExpressions)
    stripped.matchExpressions = selector.matchExpressions.map((requirement) => ({
      ...requirement,
      key: podLabelKey(requirement.key),
    }));
  return stripped;
}

/** Separates namespace conditions (pod namespace, namespace labels) from pod label conditions. */
export function splitEndpointSelector(selector: LabelSelector): {
  podSelector: LabelSelector;
  pin: NamespacePin;
} {
  const stripped = stripSelectorPrefixes(selector);
  const pin: NamespacePin = { excludedNamespaces: [], selectsNoPod: false };
  // A required label of another source (`reserved:health`, `reserved:host`, `cidr:...`) names an
  // identity no pod has: the rule selects no pod (DESIGN.md section 3).
  const requiredKeys = [
    ...Object.keys(stripped.matchLabels ?? {}),
    ...(stripped.matchExpressions ?? [])
      .filter((requirement) => requirement.operator === 'In' || requirement.operator === 'Exists')
      .map((requirement) => requirement.key),
  ];
  if (requiredKeys.some((key) => key.includes(':'))) pin.selectsNoPod = true;
  const podLabels: Record<string, string> = {};
  const podExpressions: LabelSelectorRequirement[] = [];
  const namespaceLabels: Record<string, string> = {};
  const namespaceExpressions: LabelSelectorRequirement[] = [];
  const restrictTo = (namespaces: string[]) => {
    pin.namespaces =
      pin.namespaces === undefined
        ? namespaces
        : pin.namespaces.filter((namespace) => namespaces.includes(namespace));
    // Conflicting pins (`a` and `b`) leave no namespace: the rule selects no pod.
    if (pin.namespaces.length === 0) pin.selectsNoPod = true;
  };
  for (const [key, value] of Object.entries(stripped.matchLabels ?? {})) {
    if (key === POD_NAMESPACE_KEY) restrictTo([value]);
    else if (key.startsWith(NAMESPACE_LABELS_PREFIX))
      namespaceLabels[key.slice(NAMESPACE_LABELS_PREFIX.length)] = value;
    else podLabels[key] = value;
  }
  for (const requirement of stripped.matchExpressions ?? []) {
    if (requirement.key === POD_NAMESPACE_KEY) {
      const values = requirement.values ?? [];
      if (requirement.operator === 'In') restrictTo(values);
      else if (requirement.operator === 'NotIn') pin.excludedNamespaces.push(...values);
      else if (requirement.operator === 'DoesNotExist') pin.selectsNoPod = true;
      // `Exists` holds for every pod: nothing to keep.
    } else if (requirement.key.startsWith(NAMESPACE_LABELS_PREFIX)) {
      namespaceExpressions.push({
        ...requirement,
        key: requirement.key.slice(NAMESPACE_LABELS_PREFIX.length),
      });
    } else podExpressions.push(requirement);
  }
  const podSelector: LabelSelector = {};
  if (Object.keys(podLabels).length > 0) podSelector.matchLabels = podLabels;
  if (podExpressions.length > 0) podSelector.matchExpressions = podExpressions;
  if (Object.keys(namespaceLabels).length > 0 || namespaceExpressions.length > 0) {
    pin.namespaceSelector = {};
    if (Object.keys(namespaceLabels).length > 0) pin.namespaceSelector.matchLabels = namespaceLabels;
    if (namespaceExpressions.length > 0) pin.namespaceSelector.matchExpressions = namespaceExpressions;
  }
  return { podSelector, pin };
}

function readEnableDefaultDeny(value: unknown, where: string): Record<CiliumDirection, boolean> {
  const settings = readRecord(value, where);
  const read = (direction: CiliumDirection): boolean => {
    const setting = settings[direction];
    if (setting === undefined || setting === null) return true;
    if (typeof setting !== 'boolean')
      throw new AdapterParseError(`${where}.${direction} must be true or false`);
    return setting;
  };
  return { ingress: read('ingress'), egress: read('egress') };
}

/**
 * Reads one rule. Returns undefined for host policies (`nodeSelector`): they select nodes, not
 * pods, so no workload of a namespace is constrained by them.
 */
export function readCiliumRule(value: unknown, where: string): CiliumRule | undefined {
  const rule = readRecord(value, where);
  const hasEndpointSelector = rule.endpointSelector !== undefined && rule.endpointSelector !== null;
  const hasNodeSelector = rule.nodeSelector !== undefined && rule.nodeSelector !== null;
  if (hasEndpointSelector && hasNodeSelector)
    throw new AdapterParseError(`${where} sets both endpointSelector and nodeSelector`);
  if (!hasEndpointSelector && !hasNodeSelector)
    throw new AdapterParseError(`${where} needs an endpointSelector or a nodeSelector`);
  const sections = {
    ingress: {
      allow: readRecordList(rule.ingress, `${where}.ingress`),
      deny: readRecordList(rule.ingressDeny, `${where}.ingressDeny`),
    },
    egress: {
      allow: readRecordList(rule.egress, `${where}.egress`),
      deny: readRecordList(rule.egressDeny, `${where}.egressDeny`),
    },
  };
  const defaultDeny = readEnableDefaultDeny(rule.enableDefaultDeny, `${where}.enableDefaultDeny`);
  if (hasNodeSelector) {
    readSelector(rule.nodeSelector, `${where}.nodeSelector`);
    return undefined;
  }
  const { podSelector, pin } = splitEndpointSelector(
    readSelector(rule.endpointSelector, `${where}.endpointSelector`),
  );
  return { where, podSelector, pin, sections, defaultDeny };
}

/** An allow rule open to every peer on every port (`toEntities: [all]` without ports). */
export function allowsEverything(rule: Record<string, unknown>, direction: CiliumDirection): boolean {
  const prefix = direction === 'ingress' ? 'from' : 'to';
  const entities = rule[`${prefix}Entities`];
  const hasPorts = Array.isArray(rule.toPorts) && rule.toPorts.length > 0;
  return Array.isArray(entities) && entities.includes('all') && !hasPorts;
}

/**
 * Whether an allow rule lets any traffic through. A rule with no peer and no port (`{}`) allows
 * nothing: Cilium's documented deny-all is `ingress: [{}]`. Ports alone allow every peer on them.
 */
export function allowsTraffic(rule: Record<string, unknown>, direction: CiliumDirection): boolean {
  const fields = [...PEER_FIELDS[direction], 'toPorts', 'icmps'];
  return fields.some((field) => Array.isArray(rule[field]) && (rule[field] as unknown[]).length > 0);
}

/** Peers of one endpoint selector: namespace conditions are names, pod labels a detail. */
function describeEndpoints(selector: LabelSelector, ownNamespace: string | null): Text {
  const { podSelector, pin } = splitEndpointSelector(selector);
  const pods = isEmptySelector(podSelector)
    ? text`any pod`
    : [detail(`pods ${formatLabelSelector(podSelector)}`, 'selected pods')];
  if (pin.namespaces !== undefined && pin.namespaces.length > 0)
    return text`${pods} in ${joinText(
      pin.namespaces.map((namespace) => [namespaceName(namespace)]),
      ', ',
    )}`;
  if (pin.namespaceSelector !== undefined)
    return text`${pods} in namespaces labelled ${detail(formatLabelSelector(pin.namespaceSelector), 'as selected')}`;
  // Cilium pins peers of a namespaced policy to its own namespace unless they name one.
  return ownNamespace === null
    ? text`${pods} in any namespace`
    : text`${pods} in ${namespaceName(ownNamespace)}`;
}

function describeCidrSets(value: unknown, where: string): Text {
  const described = readRecordList(value, where).map((entry, index) => {
    const except = readStringList(entry.except, `${where}[${index}].except`);
    const cidr =
      typeof entry.cidr === 'string'
        ? entry.cidr
        : typeof entry.cidrGroupRef === 'string'
          ? `CIDR group ${entry.cidrGroupRef}`
          : undefined;
    if (cidr === undefined) throw new AdapterParseError(`${where}[${index}] needs a cidr or a cidrGroupRef`);
    return except.length > 0 ? `${cidr} except ${except.join(', ')}` : cidr;
  });
  return [detail(joinLimitedStrings(described), 'an IP range')];
}

function describeServices(value: unknown, where: string, ownNamespace: string | null): Text[] {
  return readRecordList(value, where).map((entry, index) => {
    const at = `${where}[${index}]`;
    if (entry.k8sService !== undefined) {
      const service = readRecord(entry.k8sService, `${at}.k8sService`);
      const serviceName = readRequiredString(service.serviceName, `${at}.k8sService.serviceName`);
      const namespace = typeof service.namespace === 'string' ? service.namespace : ownNamespace;
      return text`service ${objectName(serviceName, namespace)}`;
    }
    if (entry.k8sServiceSelector !== undefined) {
      const serviceSelector = readRecord(entry.k8sServiceSelector, `${at}.k8sServiceSelector`);
      const selector = readSelector(serviceSelector.selector, `${at}.k8sServiceSelector.selector`);
      return [detail(`services ${formatLabelSelector(selector)}`, 'selected services')];
    }
    throw new AdapterParseError(`${at} needs k8sService or k8sServiceSelector`);
  });
}

function describeFqdns(value: unknown, where: string): Text {
  const names = readRecordList(value, where).map((entry, index) => {
    const name = entry.matchName ?? entry.matchPattern;
    if (typeof name !== 'string')
      throw new AdapterParseError(`${where}[${index}] needs matchName or matchPattern`);
    return name;
  });
  return [detail(`hosts ${joinLimitedStrings(names)}`, 'some hosts')];
}

/** What one allow or deny rule lets through (or blocks): its peers, then its ports. */
export function describeCiliumRule(
  rule: Record<string, unknown>,
  direction: CiliumDirection,
  where: string,
  ownNamespace: string | null,
): Text {
  const prefix = direction === 'ingress' ? 'from' : 'to';
  const peers: Text[] = [];
  for (const [index, selector] of readRecordList(
    rule[`${prefix}Endpoints`],
    `${where}.${prefix}Endpoints`,
  ).entries())
    peers.push(
      describeEndpoints(readSelector(selector, `${where}.${prefix}Endpoints[${index}]`), ownNamespace),
    );
  const cidrs = readStringList(rule[`${prefix}CIDR`], `${where}.${prefix}CIDR`);
  if (cidrs.length > 0) peers.push([detail(joinLimitedStrings(cidrs), 'an IP range')]);
  if (rule[`${prefix}CIDRSet`] !== undefined)
    peers.push(describeCidrSets(rule[`${prefix}CIDRSet`], `${where}.${prefix}CIDRSet`));
  const entities = readStringList(rule[`${prefix}Entities`], `${where}.${prefix}Entities`);
  if (entities.length > 0) peers.push([detail(`entities ${entities.join(', ')}`, 'some entities')]);
  if (direction === 'egress') {
    peers.push(...describeServices(rule.toServices, `${where}.toServices`, ownNamespace));
    if (rule.toFQDNs !== undefined) peers.push(describeFqdns(rule.toFQDNs, `${where}.toFQDNs`));
  }
  for (const field of [`${prefix}Groups`, `${prefix}Nodes`]) {
    if (readRecordList(rule[field], `${where}.${field}`).length > 0)
      peers.push([detail(field === `${prefix}Nodes` ? 'selected nodes' : 'cloud groups', 'other peers')]);
  }
  const ports = describePorts(rule, where);
  // Without peers, ports alone admit every peer on them; a rule with neither (`{}`) admits nothing.
  const peerText =
    peers.length > 0
      ? joinLimited(peers, ' or ', 3, 'peer')
      : ports.length > 0
        ? text`any peer`
        : text`no peer`;
  return ports.length === 0 ? peerText : text`${peerText} on ${ports}`;
}

/** `TCP/80, ANY/53 (HTTP GET /api)`: ports with their layer-7 rules, as one detail. */
function describePorts(rule: Record<string, unknown>, where: string): Text {
  const described: string[] = [];
  for (const [index, portRule] of readRecordList(rule.toPorts, `${where}.toPorts`).entries()) {
    const at = `${where}.toPorts[${index}]`;
    const ports = readRecordList(portRule.ports, `${at}.ports`).map((port, portIndex) => {
      if (typeof port.port !== 'string' && typeof port.port !== 'number')
        throw new AdapterParseError(`${at}.ports[${portIndex}].port must be a port number or name`);
      const protocol = typeof port.protocol === 'string' ? port.protocol : 'ANY';
      // Port 0 is Cilium's "every port" (of the protocol, or of all of them for ANY).
      if (String(port.port) === '0') return protocol === 'ANY' ? 'any port' : `any ${protocol} port`;
      const range = port.endPort !== undefined ? `${port.port}-${String(port.endPort)}` : String(port.port);
      return `${protocol}/${range}`;
    });
    const layer7 = describeLayer7(readRecord(portRule.rules, `${at}.rules`), `${at}.rules`);
    // TLS server names (SNI) restrict the port to connections for those names only.
    const serverNames = readStringList(portRule.serverNames, `${at}.serverNames`);
    if (serverNames.length > 0) layer7.unshift(`TLS SNI ${serverNames.join(', ')}`);
    const joined = ports.length > 0 ? ports.join(', ') : 'any port';
    described.push(layer7.length > 0 ? `${joined} (${layer7.join('; ')})` : joined);
  }
  for (const [index, icmp] of readRecordList(rule.icmps, `${where}.icmps`).entries()) {
    const types = readRecordList(icmp.fields, `${where}.icmps[${index}].fields`).map(
      (field) =>
        `${typeof field.family === 'string' ? field.family : 'IPv4'} ICMP type ${String(field.type)}`,
    );
    described.push(...types);
  }
  return described.length === 0 ? [] : [detail(joinLimitedStrings(described), 'some ports')];
}

function describeLayer7(rules: Record<string, unknown>, where: string): string[] {
  const described = readRecordList(rules.http, `${where}.http`).map((rule) =>
    ['HTTP', rule.method, rule.host, rule.path].filter((part) => typeof part === 'string').join(' '),
  );
  for (const rule of readRecordList(rules.dns, `${where}.dns`)) {
    const name = rule.matchName ?? rule.matchPattern;
    if (typeof name === 'string') described.push(`DNS ${name}`);
  }
  if (rules.kafka !== undefined) described.push('Kafka rules');
  return described;
}

/** Whether any rule of the list has layer-7 (HTTP, DNS, Kafka) rules: a tag, so searchable. */
export function hasLayer7Rules(rules: ReadonlyArray<Record<string, unknown>>): boolean {
  return rules.some((rule) =>
    (Array.isArray(rule.toPorts) ? rule.toPorts : []).some(
      (portRule: unknown) => isRecord(portRule) && portRule.rules !== undefined,
    ),
  );
}
