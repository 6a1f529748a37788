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
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { detail, joinText, objectName, text, type Text } from '../../../model/text';
import { LINKERD_RETAINED_KINDS, orLinkerd } from './linkerd';
import { linkerdNamespaceConstraints } from './linkerd-namespace';
import { joinLimited } from '../../../model/summary-rules';
import { describeAuthorizationRule, describeSidecarHost, matchesEveryRequest } from './istio-rules';
import { readRecord, readRecordList, readStringList, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import {
  podsText,
  quoted,
  readChoice,
  readRequiredString,
  readStringMap,
  scopeText,
} from '../shared/scope-text';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// Istio security.istio.io AuthorizationPolicy and PeerAuthentication, networking.istio.io Sidecar →
// one MeshPolicy constraint per object; root-namespace objects apply mesh-wide. Linkerd: linkerd.ts.

/** What every mesh constraint shares: where it applies, to which pods, and how to phrase that. */
interface MeshTarget {
  source: SourceObject & { namespace: string };
  name: Text;
  scope: NamespaceScope;
  meshWide: boolean;
  workloadSelector?: LabelSelector;
  /** `pods app=web in shop`, `all pods in every namespace`, or the targeted gateway or service. */
  appliesTo: Text;
}

interface MeshOutcome {
  severity: Severity;
  effect: Effect;
  summary: Text;
  remediationHint: Text;
  tags: string[];
}

/** Istio selectors are plain label maps: `selector.matchLabels`, or `workloadSelector.labels`. */
function readLabelMap(
  value: unknown,
  where: string,
  field: 'matchLabels' | 'labels',
): LabelSelector | undefined {
  const matchLabels = readStringMap(readRecord(value, where)[field], `${where}.${field}`);
  return matchLabels === undefined || Object.keys(matchLabels).length === 0 ? undefined : { matchLabels };
}

/**
 * Where the object applies. Istio documents that AuthorizationPolicy and PeerAuthentication in the
 * root namespace match pods of every namespace, with or without a selector; a Sidecar there is the
 * mesh default only without a workloadSelector.
 */
function meshTargetOf(
  object: KubernetesObject,
  spec: Record<string, unknown>,
  context: AdapterContext,
): MeshTarget {
  const source = sourceOf(object, true) as SourceObject & { namespace: string };
  const isSidecar = source.kind === 'Sidecar';
  const workloadSelector = isSidecar
    ? readLabelMap(spec.workloadSelector, 'spec.workloadSelector', 'labels')
    : readLabelMap(spec.selector, 'spec.selector', 'matchLabels');
  const targets = [
    ...(spec.targetRef !== undefined
      ? [{ where: 'spec.targetRef', ref: readRecord(spec.targetRef, 'spec.targetRef') }]
      : []),
    ...readRecordList(spec.targetRefs, 'spec.targetRefs').map((ref, index) => ({
      where: `spec.targetRefs[${index}]`,
      ref,
    })),
  ];
  const meshWide =
    source.namespace === context.meshRootNamespace &&
    targets.length === 0 &&
    !(isSidecar && workloadSelector);
  const scope: NamespaceScope = meshWide
    ? { kind: 'cluster' }
    : { kind: 'namespace', namespace: source.namespace };
  // Policies attached to gateways or services (targetRefs) apply to traffic through them; without
  // a pod selector to evaluate, the whole namespace is assumed.
  const appliesTo =
    targets.length > 0
      ? text`${joinText(
          targets.map(({ where, ref }) => {
            const kind = readRequiredString(ref.kind, `${where}.kind`);
            const name = readRequiredString(ref.name, `${where}.name`);
            return text`${kind} ${objectName(name, source.namespace)}`;
          }),
          ', ',
        )} ${scopeText(scope)}`
      : text`${podsText(workloadSelector)} ${scopeText(scope)}`;
  const target: MeshTarget = {
    source,
    name: [objectName(source.name, source.namespace)],
    scope,
    meshWide,
    appliesTo,
  };
  if (workloadSelector !== undefined && targets.length === 0) target.workloadSelector = workloadSelector;
  return target;
}

const AUTHORIZATION_ACTIONS = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'] as const;

function authorizationOutcome(spec: Record<string, unknown>, target: MeshTarget): MeshOutcome {
  const action = readChoice(spec.action, 'spec.action', AUTHORIZATION_ACTIONS, 'ALLOW');
  const rules = readRecordList(spec.rules, 'spec.rules');
  const described = joinLimited(
    rules.map((rule, index) => describeAuthorizationRule(rule, `spec.rules[${index}]`)),
    '; or ',
    2,
    'rule',
  );
  const policy = text`AuthorizationPolicy "${target.name}"`;
  const pods = target.appliesTo;
  const everyRequest = rules.some(matchesEveryRequest);
  const tags = ['mesh', 'istio', 'authorization', action.toLowerCase()];
  const info = (effect: Effect, summary: Text, remediationHint: Text): MeshOutcome => ({
    severity: 'Info',
    effect,
    summary,
    remediationHint,
    tags,
  });
  switch (action) {
    case 'DENY':
      // A DENY policy denies what its rules match: without rules it matches nothing.
      if (rules.length === 0)
        return info(
          'deny',
          text`Istio ${policy} denies no request to ${pods}: it has no rules`,
          text`no action needed; ${policy} has no rules and denies nothing`,
        );
      return {
        severity: 'Critical',
        effect: 'deny',
        summary: everyRequest
          ? text`Istio ${policy} denies all requests to ${pods}`
          : text`Istio ${policy} denies requests to ${pods} that match: ${described}`,
        remediationHint: text`make sure your requests to these pods do not match the denied sources and operations, or ask the owner of ${policy} to narrow it`,
        tags: everyRequest ? [...tags, 'deny-all'] : tags,
      };
    case 'ALLOW':
      // An ALLOW policy without rules allows nothing: Istio's documented "allow-nothing" policy.
      // It rejects every request as a DENY would, so it is Critical like a DENY.
      if (rules.length === 0)
        return {
          severity: 'Critical',
          effect: 'deny',
          summary: text`Istio ${policy} denies all requests to ${pods}: an ALLOW policy without rules allows nothing`,
          remediationHint: target.meshWide
            ? text`ask the mesh admins for an ALLOW AuthorizationPolicy covering the requests your workload must accept`
            : text`add an ALLOW AuthorizationPolicy ${scopeText(target.scope)} for the requests your workload must accept`,
          tags: [...tags, 'deny-all'],
        };
      // A rule matching every request (`rules: [{}]`) allows everything.
      if (everyRequest)
        return info(
          'restrict',
          text`Istio ${policy} allows all requests to ${pods}`,
          text`no action needed; ${policy} allows every request`,
        );
      return {
        severity: 'Warning',
        effect: 'restrict',
        summary: text`Istio ${policy} allows only these requests to ${pods}, denying all others: ${described}`,
        remediationHint: text`call these pods only as an allowed source with an allowed operation, or ask the owner of ${policy} to add a rule for your workload`,
        tags,
      };
    case 'CUSTOM': {
      const provider = readRequiredString(
        readRecord(spec.provider, 'spec.provider').name,
        'spec.provider.name',
      );
      const authorizer = detail(provider, 'an external authorizer');
      if (rules.length === 0)
        return info(
          'restrict',
          text`Istio ${policy} sends no request to ${pods} to ${authorizer}: it has no rules`,
          text`no action needed; ${policy} has no rules`,
        );
      return {
        severity: 'Warning',
        effect: 'restrict',
        summary: text`Istio ${policy} lets external authorizer ${authorizer} decide requests to ${pods} that match: ${described}`,
        remediationHint: text`make sure your requests pass external authorizer ${authorizer} called by ${policy}, or ask its owner`,
        tags,
      };
    }
    case 'AUDIT':
      return info(
        'audit',
        text`Istio ${policy} audits (logs, never blocks) requests to ${pods} that match: ${rules.length === 0 ? text`nothing` : described}`,
        text`no action needed; ${policy} only logs matching requests`,
      );
  }
}

const MTLS_MODES = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'] as const;

const RELAXED_MODE_WORDING: Record<Exclude<(typeof MTLS_MODES)[number], 'STRICT'>, string> = {
  UNSET: 'inherits the mutual TLS mode of its parent (mesh default PERMISSIVE)',
  PERMISSIVE: 'accepts both mutual TLS and plaintext',
  DISABLE: 'disables mutual TLS (plaintext only)',
};

function portsWording(ports: readonly string[]): string {
  return `${ports.length === 1 ? 'port' : 'ports'} ${ports.join(', ')}`;
}

function peerAuthenticationOutcome(spec: Record<string, unknown>, target: MeshTarget): MeshOutcome {
  const mode = readChoice(readRecord(spec.mtls, 'spec.mtls').mode, 'spec.mtls.mode', MTLS_MODES, 'UNSET');
  const portModes = Object.entries(readRecord(spec.portLevelMtls, 'spec.portLevelMtls'))
    .map(([port, setting]) => ({
      port,
      mode: readChoice(
        readRecord(setting, `spec.portLevelMtls.${port}`).mode,
        `spec.portLevelMtls.${port}.mode`,
        MTLS_MODES,
        'UNSET',
      ),
    }))
    .sort((left, right) => Number(left.port) - Number(right.port) || left.port.localeCompare(right.port));
  const strictPorts = portModes.filter((entry) => entry.mode === 'STRICT').map((entry) => entry.port);
  const relaxedPorts = portModes.filter((entry) => entry.mode !== 'STRICT').map((entry) => entry.port);
  const policy = text`PeerAuthentication "${target.name}"`;
  const pods = target.appliesTo;
  const tags = ['mesh', 'istio', 'mtls', mode.toLowerCase()];
  const requireHint = text`call these pods only from workloads in the mesh (with an Istio proxy) so traffic uses mutual TLS; plaintext clients are rejected`;
  if (mode === 'STRICT') {
    const except =
      relaxedPorts.length > 0 ? text` except on ${detail(portsWording(relaxedPorts), 'some ports')}` : [];
    return {
      severity: 'Warning',
      effect: 'require',
      summary: text`Istio ${policy} requires mutual TLS for traffic to ${pods}${except}; plaintext is rejected`,
      remediationHint: requireHint,
      tags,
    };
  }
  if (strictPorts.length > 0)
    return {
      severity: 'Warning',
      effect: 'require',
      summary: text`Istio ${policy} requires mutual TLS on ${detail(portsWording(strictPorts), 'some ports')} of ${pods}; plaintext to them is rejected`,
      remediationHint: requireHint,
      tags: [...tags, 'port-level'],
    };
  // The mode still decides which transport the pods accept, so `restrict` rather than a new effect.
  return {
    severity: 'Info',
    effect: 'restrict',
    summary: text`Istio ${policy} ${RELAXED_MODE_WORDING[mode]} for ${pods}`,
    remediationHint: text`no action needed; ${policy} does not reject plaintext traffic`,
    tags,
  };
}

function sidecarOutcome(spec: Record<string, unknown>, target: MeshTarget): MeshOutcome {
  const hosts = readRecordList(spec.egress, 'spec.egress').flatMap((listener, index) =>
    readStringList(listener.hosts, `spec.egress[${index}].hosts`),
  );
  const outbound = readChoice(
    readRecord(spec.outboundTrafficPolicy, 'spec.outboundTrafficPolicy').mode,
    'spec.outboundTrafficPolicy.mode',
    ['REGISTRY_ONLY', 'ALLOW_ANY'] as const,
    'ALLOW_ANY',
  );
  const registryOnly = outbound === 'REGISTRY_ONLY';
  const sidecar = text`Sidecar "${target.name}"`;
  const pods = target.appliesTo;
  const tags = [
    'mesh',
    'istio',
    'sidecar',
    ...(hosts.length > 0 ? ['egress-hosts'] : []),
    ...(registryOnly ? ['registry-only'] : []),
  ];
  if (hosts.length === 0 && !registryOnly)
    return {
      severity: 'Info',
      effect: 'restrict',
      summary: text`Istio ${sidecar} configures the proxy of ${pods} without limiting outbound traffic`,
      remediationHint: text`no action needed; ${sidecar} does not limit where your workload can connect`,
      tags,
    };
  const reachable = joinLimited(
    hosts.map((host) => describeSidecarHost(host, target.source.namespace)),
    ', ',
    4,
    'host',
  );
  const summary =
    hosts.length === 0
      ? text`Istio ${sidecar} blocks outbound traffic from ${pods} to hosts outside the mesh registry (REGISTRY_ONLY)`
      : text`Istio ${sidecar} limits the services ${pods} can reach to ${reachable}${registryOnly ? '; other outbound traffic is blocked (REGISTRY_ONLY)' : ''}`;
  return {
    severity: 'Warning',
    effect: 'restrict',
    summary,
    remediationHint: text`add the services your workload calls to the egress hosts of ${sidecar} (external hosts need a ServiceEntry), or ask its owner to`,
    tags,
  };
}

const KIND_RESOURCES: Record<string, string> = {
  // Qualified by group: other meshes (Linkerd) also define an AuthorizationPolicy kind.
  AuthorizationPolicy: 'authorizationpolicy.security.istio.io',
  PeerAuthentication: 'peerauthentication.security.istio.io',
  Sidecar: 'sidecar.networking.istio.io',
};

export function meshPolicyToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  if (typeof object.kind !== 'string' || !Object.hasOwn(KIND_RESOURCES, object.kind))
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not an Istio policy`);
  const resource = KIND_RESOURCES[object.kind];
  // `spec: {}` is meaningful (an ALLOW policy without rules denies everything): absent reads as empty.
  const spec = readRecord(object.spec, 'spec');
  const target = meshTargetOf(object, spec, context);
  const outcome =
    object.kind === 'AuthorizationPolicy'
      ? authorizationOutcome(spec, target)
      : object.kind === 'PeerAuthentication'
        ? peerAuthenticationOutcome(spec, target)
        : sidecarOutcome(spec, target);
  const { source } = target;
  const draft: ConstraintDraft = {
    id: 'policy',
    name: source.name,
    displayName: target.name,
    type: 'MeshPolicy',
    severity: outcome.severity,
    effect: outcome.effect,
    adapter: 'mesh',
    source,
    scope: target.scope,
    resourceTargets: [...WORKLOAD_RESOURCES],
    tags: target.meshWide ? [...outcome.tags, 'mesh-wide'] : outcome.tags,
    summary: outcome.summary,
    remediationHint: outcome.remediationHint,
    remediation: {
      summary: outcome.remediationHint,
      steps: [
        inspectSourceStep(source, resource),
        askOwnerStep(
          text`Ask the owner of ${source.kind} "${target.name}" to allow what your workload needs`,
          // Root-namespace policies are the mesh administrators' (cluster-wide), not a namespace's.
          target.meshWide ? 'cluster-admin' : 'namespace-admin',
        ),
      ],
    },
  };
  if (target.workloadSelector !== undefined) draft.workloadSelector = target.workloadSelector;
  return [draft];
}

export const meshAdapter: Adapter = {
  name: 'mesh',
  kinds: POLICY_SOURCE_KINDS.mesh.kinds,
  retainedKinds: LINKERD_RETAINED_KINDS,
  namespaceConstraints: linkerdNamespaceConstraints,
  toConstraints: orLinkerd(meshPolicyToConstraints),
};
