import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type ConstraintDraft,
  type NamespaceScope,
  type SourceObject,
} from '../../../model/constraint';
import type { KubernetesObject, LabelSelector } from '../../../model/kubernetes';
import { detail, namespaceName, objectName, text, type Text } from '../../../model/text';
import {
  describeOperations,
  describeTargets,
  readAdmissionRules,
  type AdmissionRules,
} from '../shared/admission-rules';
import {
  readOptionalSelector,
  readOptionalString,
  readRecord,
  readRecordList,
  sourceOf,
} from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// admissionregistration.k8s.io/v1 Validating- and MutatingWebhookConfiguration → one Admission
// constraint per entry of `webhooks[]`, named `<configuration>/<webhook>` even when there is one
// entry, so a name never changes when entries are added (DESIGN.md section 3).

const VALIDATING = 'ValidatingWebhookConfiguration';
const MUTATING = 'MutatingWebhookConfiguration';

type WebhookKind = typeof VALIDATING | typeof MUTATING;
type FailurePolicy = 'Fail' | 'Ignore';

function readFailurePolicy(value: unknown, where: string): FailurePolicy {
  // v1 defaults an unset failurePolicy to Fail.
  if (value === undefined || value === null || value === 'Fail') return 'Fail';
  if (value === 'Ignore') return 'Ignore';
  throw new AdapterParseError(`${where} is ${JSON.stringify(value)}, expected Fail or Ignore`);
}

/**
 * Where the API server sends the review. A service is a name in its own namespace, so it is an
 * objectName (hidden from other namespaces until `full`, even at `detailed`) with port and path as a
 * detail; a URL is a host, a plain rule detail.
 */
function readEndpoint(value: unknown, where: string): Text {
  const clientConfig = readRecord(value, where);
  if (clientConfig.service !== undefined && clientConfig.service !== null) {
    const service = readRecord(clientConfig.service, `${where}.service`);
    const name = readOptionalString(service.name, `${where}.service.name`);
    const namespace = readOptionalString(service.namespace, `${where}.service.namespace`);
    if (!name || !namespace) throw new AdapterParseError(`${where}.service needs a name and a namespace`);
    if (service.port !== undefined && (typeof service.port !== 'number' || !Number.isInteger(service.port)))
      throw new AdapterParseError(`${where}.service.port must be an integer`);
    const path = readOptionalString(service.path, `${where}.service.path`) ?? '';
    return text`service ${namespaceName(namespace)}/${objectName(name, namespace)}${detail(`:${String(service.port ?? 443)}${path}`, '')}`;
  }
  const url = readOptionalString(clientConfig.url, `${where}.url`);
  if (!url) throw new AdapterParseError(`${where} needs a service or a url`);
  return [detail(url, 'its webhook server')];
}

interface WebhookEntry {
  name: string;
  failurePolicy: FailurePolicy;
  scope: NamespaceScope;
  objectSelector?: LabelSelector;
  rules: AdmissionRules;
  endpoint: Text;
}

function readWebhookEntry(entry: Record<string, unknown>, where: string): WebhookEntry {
  const name = readOptionalString(entry.name, `${where}.name`);
  if (!name) throw new AdapterParseError(`${where}.name must be a non-empty string`);
  const namespaceSelector = readOptionalSelector(entry.namespaceSelector, `${where}.namespaceSelector`);
  const scope: NamespaceScope = namespaceSelector
    ? { kind: 'cluster', namespaceSelector }
    : { kind: 'cluster' };
  return {
    name,
    failurePolicy: readFailurePolicy(entry.failurePolicy, `${where}.failurePolicy`),
    scope,
    objectSelector: readOptionalSelector(entry.objectSelector, `${where}.objectSelector`),
    rules: readAdmissionRules(entry.rules, `${where}.rules`),
    endpoint: readEndpoint(entry.clientConfig, `${where}.clientConfig`),
  };
}

/** `can reject CREATE, UPDATE requests for apps/deployments`, with the resources as a rule detail. */
function describeInterception(kind: WebhookKind, rules: AdmissionRules): Text {
  if (rules.targets.length === 0) {
    if (rules.skippedSubresources) return text`intercepts only subresource requests`;
    return rules.skippedClusterScoped
      ? text`intercepts only cluster-scoped resources`
      : text`matches no requests`;
  }
  const verb = kind === VALIDATING ? 'can reject' : 'can change';
  const resources = detail(describeTargets(rules.targets), 'matching resources');
  return text`${verb} ${describeOperations(rules.operations)} requests for ${resources}`;
}

function buildConstraint(source: SourceObject, kind: WebhookKind, entry: WebhookEntry): ConstraintDraft {
  const configuration = objectName(source.name, null);
  const webhook = objectName(entry.name, null);
  const severity: Severity = entry.failurePolicy === 'Fail' ? 'Warning' : 'Info';
  const effect: Effect = kind === VALIDATING ? 'deny' : 'mutate';
  const whenDown =
    entry.failurePolicy === 'Fail'
      ? 'requests fail while it is unreachable'
      : 'skipped while it is unreachable';
  const summary = text`${kind} "${configuration}" webhook "${webhook}" ${describeInterception(kind, entry.rules)}, served by ${entry.endpoint}; ${whenDown}`;
  const remediationHint =
    kind === VALIDATING
      ? text`if a request is rejected, change your object to satisfy the message of webhook "${webhook}", or ask the cluster admins for an exception`
      : text`expect webhook "${webhook}" to change your objects on admission: compare the stored object with your manifest before chasing drift`;
  return {
    id: `webhook:${entry.name}`,
    name: `${source.name}/${entry.name}`,
    displayName: text`${configuration}/${webhook}`,
    type: 'Admission',
    severity,
    effect,
    adapter: 'webhookconfig',
    source,
    // Rules of `scope: Cluster` alone reach no namespaced object: in no namespace's report.
    scope:
      entry.rules.targets.length === 0 && entry.rules.skippedClusterScoped && !entry.rules.skippedSubresources
        ? { kind: 'none', reason: 'its rules have scope Cluster' }
        : entry.scope,
    ...(entry.objectSelector ? { workloadSelector: entry.objectSelector } : {}),
    resourceTargets: entry.rules.targets,
    tags: [
      'admission',
      'webhook',
      kind === VALIDATING ? 'validating' : 'mutating',
      entry.failurePolicy === 'Fail' ? 'fail-closed' : 'fail-open',
    ],
    summary,
    remediationHint,
    remediation: {
      summary: remediationHint,
      steps: [
        inspectSourceStep(source, kind.toLowerCase()),
        askOwnerStep(
          text`Ask the cluster admins to exempt your workload from webhook "${webhook}" of ${kind} "${configuration}", or to change it, if it blocks a change you need`,
          'cluster-admin',
        ),
      ],
    },
  };
}

export function webhookConfigurationToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  const kind = object.kind;
  if (kind !== VALIDATING && kind !== MUTATING)
    throw new AdapterParseError(`kind ${JSON.stringify(kind)} is not ${VALIDATING} or ${MUTATING}`);
  const source = sourceOf(object, false);
  // Our own webhook warns about constraints; reporting it as one would warn about the warner.
  if (source.name === context.ownWebhookName) return [];
  const entries = readRecordList(object.webhooks, 'webhooks').map((entry, index) =>
    readWebhookEntry(entry, `webhooks[${index}]`),
  );
  const seen = new Set<string>();
  for (const entry of entries) {
    // The API server enforces unique names; duplicates would collide on the constraint id.
    if (seen.has(entry.name))
      throw new AdapterParseError(`webhooks has two entries named ${JSON.stringify(entry.name)}`);
    seen.add(entry.name);
  }
  return entries.map((entry) => buildConstraint(source, kind, entry));
}

export const webhookConfigurationAdapter: Adapter = {
  name: 'webhookconfig',
  kinds: POLICY_SOURCE_KINDS.webhookconfig.kinds,
  toConstraints: (object, context) => webhookConfigurationToConstraints(object, context),
};
