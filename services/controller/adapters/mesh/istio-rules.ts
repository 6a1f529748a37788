import { AdapterParseError } from '../../../model/constraint';
import { detail, joinText, namespaceName, objectName, text, type Text } from '../../../model/text';
import { readRecord, readRecordList, readStringList } from '../shared/object-fields';
import { namespaceListText } from '../shared/scope-text';
import { joinLimited, joinLimitedStrings } from '../../../model/summary-rules';

// Describing Istio rules privacy-aware: namespaces and service accounts (inside principals too) are
// names a viewer of another namespace must not see; hosts, paths, ports, IPs are details.

/** `cluster.local/ns/shop/sa/web` → `service account web in shop`; other principals are details. */
function describePrincipal(principal: string): Text {
  const spiffe = /^(.*)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(principal);
  if (!spiffe) return [detail(principal, 'a principal')];
  const [, , namespace, serviceAccount] = spiffe;
  return describeServiceAccount(namespace, serviceAccount);
}

function describeServiceAccount(namespace: string, serviceAccount: string): Text {
  const inNamespace = namespace === '*' ? text`any namespace` : text`${namespaceName(namespace)}`;
  const account =
    serviceAccount === '*'
      ? text`any service account`
      : text`service account ${objectName(serviceAccount, namespace === '*' ? null : namespace)}`;
  return text`${account} in ${inNamespace}`;
}

/** `serviceAccounts` entries are `namespace/name`. */
function describeServiceAccountEntry(entry: string): Text {
  const slash = entry.indexOf('/');
  return slash === -1
    ? [detail(entry, 'a service account')]
    : describeServiceAccount(entry.slice(0, slash), entry.slice(slash + 1));
}

/** One field of a source: `principals` and its negation `notPrincipals` read the same way. */
function describeSourceField(values: string[], field: string, negated: boolean): Text {
  const otherThan = negated ? ' other than' : '';
  switch (field) {
    case 'principals': {
      const principals = joinLimited(values.map(describePrincipal), ' or ', 3, 'principal');
      return negated ? text`principals other than ${principals}` : principals;
    }
    case 'serviceAccounts': {
      const accounts = joinLimited(values.map(describeServiceAccountEntry), ' or ', 3, 'service account');
      return negated ? text`service accounts other than ${accounts}` : accounts;
    }
    case 'namespaces':
      return text`${values.length === 1 && !negated ? 'namespace' : 'namespaces'}${otherThan} ${namespaceListText(values)}`;
    case 'requestPrincipals':
      return text`request principals${otherThan} ${detail(joinLimitedStrings(values), 'some request principals')}`;
    case 'remoteIpBlocks':
      return text`remote IPs${otherThan} ${detail(joinLimitedStrings(values), 'an IP range')}`;
    default:
      return text`IPs${otherThan} ${detail(joinLimitedStrings(values), 'an IP range')}`;
  }
}

const SOURCE_FIELDS = [
  'principals',
  'serviceAccounts',
  'namespaces',
  'requestPrincipals',
  'ipBlocks',
  'remoteIpBlocks',
];
const OPERATION_FIELDS = ['hosts', 'ports', 'methods', 'paths'];

/** Positive and negated (`notX`) forms of each field, in a fixed order so output is deterministic. */
function describeFields(
  record: Record<string, unknown>,
  fields: readonly string[],
  where: string,
  describe: (values: string[], field: string, negated: boolean) => Text,
): Text[] {
  const parts: Text[] = [];
  for (const field of fields) {
    for (const negated of [false, true]) {
      const name = negated ? `not${field[0].toUpperCase()}${field.slice(1)}` : field;
      const values = readStringList(record[name], `${where}.${name}`);
      if (values.length > 0) parts.push(describe(values, field, negated));
    }
  }
  return parts;
}

function describeOperationField(values: string[], field: string, negated: boolean): Text {
  const listed = joinLimitedStrings(values);
  const written = negated ? `${field} other than ${listed}` : `${field} ${listed}`;
  return [detail(written, `some ${field}`)];
}

/** Whether a rule matches every request: no source, operation or condition narrows it. */
export function matchesEveryRequest(rule: Record<string, unknown>): boolean {
  return ['from', 'to', 'when'].every((field) => {
    const entries = rule[field];
    return !Array.isArray(entries) || entries.length === 0;
  });
}

/** One rule: `from <sources> to <operations> when <conditions>`; fields AND, list entries OR. */
export function describeAuthorizationRule(rule: Record<string, unknown>, where: string): Text {
  const parts: Text[] = [];
  const sources = readRecordList(rule.from, `${where}.from`).map((entry, index) => {
    const at = `${where}.from[${index}].source`;
    const fields = describeFields(readRecord(entry.source, at), SOURCE_FIELDS, at, describeSourceField);
    return fields.length === 0 ? text`any source` : joinText(fields, ' and ');
  });
  if (sources.length > 0) parts.push(text`from ${joinLimited(sources, ' or ', 2, 'source')}`);
  const operations = readRecordList(rule.to, `${where}.to`).map((entry, index) => {
    const at = `${where}.to[${index}].operation`;
    const fields = describeFields(
      readRecord(entry.operation, at),
      OPERATION_FIELDS,
      at,
      describeOperationField,
    );
    return fields.length === 0 ? text`any operation` : joinText(fields, ' and ');
  });
  if (operations.length > 0) parts.push(text`to ${joinLimited(operations, ' or ', 2, 'operation')}`);
  const conditions = readRecordList(rule.when, `${where}.when`).map((condition, index) => {
    const at = `${where}.when[${index}]`;
    if (typeof condition.key !== 'string') throw new AdapterParseError(`${at}.key must be a string`);
    const values = readStringList(condition.values, `${at}.values`);
    const notValues = readStringList(condition.notValues, `${at}.notValues`);
    const written = [
      values.length > 0 ? `${condition.key} in [${joinLimitedStrings(values)}]` : '',
      notValues.length > 0 ? `${condition.key} not in [${joinLimitedStrings(notValues)}]` : '',
    ]
      .filter((part) => part !== '')
      .join(' and ');
    return [detail(written || condition.key, 'some conditions')];
  });
  if (conditions.length > 0) parts.push(text`when ${joinLimited(conditions, ' and ', 2, 'condition')}`);
  return parts.length === 0 ? text`any request` : joinText(parts, ' ');
}

/**
 * A Sidecar egress host `namespace/dnsName`: `.` is the Sidecar's own namespace, `*` any, `~` none;
 * other namespaces are names, the DNS part a detail.
 */
export function describeSidecarHost(host: string, ownNamespace: string): Text {
  const slash = host.indexOf('/');
  if (slash === -1) return [detail(host, 'some hosts')];
  const namespace = host.slice(0, slash);
  const dnsName = detail(host.slice(slash + 1), 'some hosts');
  if (namespace === '.') return text`${dnsName} in ${namespaceName(ownNamespace)}`;
  if (namespace === '*') return text`${dnsName} in any namespace`;
  if (namespace === '~') return text`${dnsName} in no namespace`;
  return text`${dnsName} in ${namespaceName(namespace)}`;
}
