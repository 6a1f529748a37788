import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type ConstraintDraft,
  type NamespaceScope,
} from '../../../model/constraint';
import type { KubernetesObject, LabelSelector } from '../../../model/kubernetes';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { detail, joinText, objectName, text } from '../../../model/text';
import { LINKERD_RETAINED_KINDS, orLinkerd } from './linkerd';
import { linkerdNamespaceConstraints } from './linkerd-namespace';
import { joinLimited } from '../../../model/summary-rules';
import { authorizationOutcome } from './authorization';
import { describeSidecarHost } from './istio-rules';
import type { MeshOutcome, MeshTarget } from './mesh-target';
import { readRecord, readRecordList, readStringList, namespacedSourceOf } from '../shared/object-fields';
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
  const source = namespacedSourceOf(object);
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
