import type { Effect, Severity } from '../../../model/api';
import { AdapterParseError, type AdapterContext, type ConstraintDraft } from '../../../model/constraint';
import {
  groupOf,
  isRecord,
  isStringRecord,
  type KubernetesObject,
  type LabelSelector,
} from '../../../model/kubernetes';
import { isEmptySelector, matchesLabelSelector } from '../../../model/label-selector';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { countOf } from '../../../model/summary-rules';
import { detail, joinText, objectName, text, type Text } from '../../../model/text';
import { readRecord, readSelector, requireSpec, namespacedSourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { podsText, quoted, readChoice, readRequiredString, scopeText } from '../shared/scope-text';
import {
  authorizationPolicyClients,
  LINKERD_GROUP,
  serverAuthorizationClients,
  type Clients,
} from './linkerd-clients';

// Linkerd policy.linkerd.io: a Server selects a port of some pods; once a Server exists, only
// clients an authorization admits reach that port (ServerAuthorization, or AuthorizationPolicy with
// its MeshTLS/Network authentications), unless its `accessPolicy` says otherwise. One MeshPolicy
// constraint per Server; the authorization and authentication kinds yield none of their own but are
// retained, so every Server is evaluated again when one of them changes.

export { LINKERD_GROUP };

const ACCESS_POLICIES = [
  'deny',
  'audit',
  'all-unauthenticated',
  'all-authenticated',
  'cluster-unauthenticated',
  'cluster-authenticated',
] as const;
type AccessPolicy = (typeof ACCESS_POLICIES)[number];

const RETAINED = [
  'Server',
  'ServerAuthorization',
  'AuthorizationPolicy',
  'MeshTLSAuthentication',
  'NetworkAuthentication',
];

export const LINKERD_RETAINED_KINDS = RETAINED.map((kind) => ({ group: LINKERD_GROUP, kind }));

interface Authorizations {
  clients: Clients[];
  /** AuthorizationPolicies on HTTPRoutes/GRPCRoutes of the namespace: routes are not indexed. */
  routeLevel: number;
}

/** Reads a retained object, or skips it when malformed: it is counted as a parse error of its own. */
function readable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof AdapterParseError) return undefined;
    throw error;
  }
}

function findAuthorizations(
  server: KubernetesObject,
  namespace: string,
  context: AdapterContext,
): Authorizations {
  const name = server.metadata?.name;
  const serverLabels = isStringRecord(server.metadata?.labels) ? server.metadata.labels : {};
  const clients: Clients[] = [];
  let routeLevel = 0;
  for (const found of context.lookupAll({ group: LINKERD_GROUP, kind: 'ServerAuthorization' }, namespace)) {
    const spec = isRecord(found) && isRecord(found.spec) ? found.spec : undefined;
    const target = spec && isRecord(spec.server) ? spec.server : undefined;
    if (!spec || !target || !isRecord(spec.client)) continue;
    const client = spec.client;
    const targets =
      target.name === name ||
      (target.selector !== undefined &&
        readable(() =>
          matchesLabelSelector(readSelector(target.selector, 'spec.server.selector'), serverLabels),
        ) === true);
    if (!targets) continue;
    const read = readable(() => serverAuthorizationClients(client, namespace));
    if (read) clients.push(read);
  }
  for (const found of context.lookupAll({ group: LINKERD_GROUP, kind: 'AuthorizationPolicy' }, namespace)) {
    const spec = isRecord(found) && isRecord(found.spec) ? found.spec : undefined;
    const target = spec && isRecord(spec.targetRef) ? spec.targetRef : undefined;
    if (!spec || !target) continue;
    if (target.kind === 'HTTPRoute' || target.kind === 'GRPCRoute') routeLevel++;
    else if (
      (target.kind === 'Server' && target.name === name) ||
      (target.kind === 'Namespace' && target.name === namespace)
    ) {
      const read = readable(() => authorizationPolicyClients(spec, namespace, context.lookup));
      if (read) clients.push(read);
    }
  }
  return { clients, routeLevel };
}

interface Outcome {
  severity: Severity;
  effect: Effect;
  says: Text;
  hint: Text;
  tag: string;
}

function outcomeOf(found: Authorizations, access: AccessPolicy, named: Text): Outcome {
  if (found.clients.some((clients) => clients.anyone))
    return {
      severity: 'Info',
      effect: 'restrict',
      says: text`admits any client`,
      hint: text`nothing to change: ${named} admits every client`,
      tag: 'allow-all',
    };
  if (found.clients.length > 0) {
    const meshOnly = found.clients.every((clients) => clients.meshOnly);
    return {
      severity: 'Warning',
      effect: meshOnly ? 'require' : 'restrict',
      says: text`admits only ${joinText(
        found.clients.map((clients) => clients.description),
        '; ',
      )}`,
      hint: meshOnly
        ? text`call it from a meshed workload with an allowed identity, or ask for an authorization for yours`
        : text`call it only from the admitted clients, or ask the owner of ${named} for an authorization`,
      tag: meshOnly ? 'mtls-required' : 'allow-list',
    };
  }
  if (found.routeLevel > 0)
    return {
      severity: 'Warning',
      effect: 'restrict',
      says: text`admits only what ${countOf(found.routeLevel, 'route-level AuthorizationPolicy', 'route-level AuthorizationPolicies')} of the namespace allow`,
      hint: text`send only requests that match an authorized route, or ask the owner of ${named} for an authorization`,
      tag: 'route-level',
    };
  if (access === 'deny')
    return {
      severity: 'Critical',
      effect: 'deny',
      says: text`denies all traffic: no AuthorizationPolicy or ServerAuthorization admits a client`,
      hint: text`ask the owner of ${named} to add an AuthorizationPolicy for your client, or no request reaches that port`,
      tag: 'default-deny',
    };
  const defaults: Record<Exclude<AccessPolicy, 'deny'>, Omit<Outcome, 'hint'>> = {
    audit: {
      severity: 'Info',
      effect: 'audit',
      says: text`admits every client and only logs those it would deny`,
      tag: 'audit',
    },
    'all-unauthenticated': {
      severity: 'Info',
      effect: 'restrict',
      says: text`admits any client`,
      tag: 'allow-all',
    },
    'all-authenticated': {
      severity: 'Warning',
      effect: 'require',
      says: text`admits only meshed clients (mTLS)`,
      tag: 'mtls-required',
    },
    'cluster-authenticated': {
      severity: 'Warning',
      effect: 'require',
      says: text`admits only meshed clients from the cluster network`,
      tag: 'mtls-required',
    },
    'cluster-unauthenticated': {
      severity: 'Warning',
      effect: 'restrict',
      says: text`admits only clients from the cluster network`,
      tag: 'cluster-only',
    },
  };
  return {
    ...defaults[access],
    hint: text`call it as ${named} requires, or ask its owner for an authorization`,
  };
}

function serverConstraints(object: KubernetesObject, context: AdapterContext): ConstraintDraft[] {
  const source = namespacedSourceOf(object);
  const spec = requireSpec(object);
  // Servers for external workloads (VMs) select no pod.
  if (spec.podSelector === undefined && spec.externalWorkloadSelector !== undefined) return [];
  const podSelector: LabelSelector = readSelector(spec.podSelector, 'spec.podSelector');
  if (typeof spec.port !== 'number' && (typeof spec.port !== 'string' || spec.port === ''))
    throw new AdapterParseError(`spec.port is ${quoted(spec.port)}, expected a port number or name`);
  const access = readChoice(spec.accessPolicy, 'spec.accessPolicy', ACCESS_POLICIES, 'deny');
  const named = text`Linkerd Server "${objectName(source.name, source.namespace)}"`;
  const outcome = outcomeOf(findAuthorizations(object, source.namespace, context), access, named);
  const target = text`${detail(`port ${String(spec.port)}`, 'a port')} of ${podsText(podSelector)} ${scopeText({ kind: 'namespace', namespace: source.namespace })}`;
  const draft: ConstraintDraft = {
    id: 'server',
    name: source.name,
    displayName: [objectName(source.name, source.namespace)],
    type: 'MeshPolicy',
    severity: outcome.severity,
    effect: outcome.effect,
    adapter: 'mesh',
    source,
    scope: { kind: 'namespace', namespace: source.namespace },
    resourceTargets: [...WORKLOAD_RESOURCES],
    tags: ['mesh', 'linkerd', outcome.tag],
    summary: text`${named} on ${target} ${outcome.says}`,
    remediationHint: outcome.hint,
    remediation: {
      summary: outcome.hint,
      steps: [
        inspectSourceStep(source, 'servers.policy.linkerd.io'),
        askOwnerStep(
          text`Ask the owner of ${named} for an AuthorizationPolicy that admits your client`,
          'namespace-admin',
        ),
      ],
    },
  };
  if (!isEmptySelector(podSelector)) draft.workloadSelector = podSelector;
  return [draft];
}

/** Authorizations and authentications: read for their own parse errors; the Servers report them. */
function validate(object: KubernetesObject, context: AdapterContext): void {
  const source = namespacedSourceOf(object);
  const spec = requireSpec(object);
  if (object.kind === 'ServerAuthorization') {
    const server = readRecord(spec.server, 'spec.server');
    if (server.name === undefined && server.selector === undefined)
      throw new AdapterParseError('spec.server needs a name or a selector');
    serverAuthorizationClients(readRecord(spec.client, 'spec.client'), source.namespace);
  } else if (object.kind === 'AuthorizationPolicy') {
    const target = readRecord(spec.targetRef, 'spec.targetRef');
    readRequiredString(target.kind, 'spec.targetRef.kind');
    readRequiredString(target.name, 'spec.targetRef.name');
    authorizationPolicyClients(spec, source.namespace, context.lookup);
  }
}

export function linkerdToConstraints(object: KubernetesObject, context: AdapterContext): ConstraintDraft[] {
  if (!RETAINED.includes(object.kind ?? ''))
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Linkerd policy kind`);
  if (object.kind === 'Server') return serverConstraints(object, context);
  validate(object, context);
  return [];
}

/** The mesh adapter's router: Linkerd's group here, every other group to the given reader (Istio). */
export function orLinkerd(
  other: (object: KubernetesObject, context: AdapterContext) => ConstraintDraft[],
): (object: KubernetesObject, context: AdapterContext) => ConstraintDraft[] {
  return (object, context) =>
    groupOf(object.apiVersion) === LINKERD_GROUP
      ? linkerdToConstraints(object, context)
      : other(object, context);
}
