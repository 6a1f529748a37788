import type { Effect, Severity } from '../../../model/api';
import { type AdapterContext, type ConstraintDraft } from '../../../model/constraint';
import { isStringRecord, type KubernetesObject } from '../../../model/kubernetes';
import {
  LINKERD_DEFAULT_INBOUND_CONSTRAINT,
  LINKERD_DEFAULT_INBOUND_POLICIES,
  LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION,
  LINKERD_PERMISSIVE_POLICY,
} from '../../../model/linkerd';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { namespaceName, text, type Text } from '../../../model/text';
import { askOwnerStep } from '../shared/remediation';
import { readChoice } from '../shared/scope-text';

// Linkerd's `config.linkerd.io/default-inbound-policy` annotation on a Namespace: what the proxies of
// its meshed pods do with traffic to ports no Server selects. `all-unauthenticated` (Linkerd's own
// default) restricts nothing, so it yields no constraint.

const POLICIES = LINKERD_DEFAULT_INBOUND_POLICIES;
type DefaultPolicy = Exclude<(typeof POLICIES)[number], typeof LINKERD_PERMISSIVE_POLICY>;

const OUTCOMES: Record<DefaultPolicy, { severity: Severity; effect: Effect; does: string; hint: string }> = {
  deny: {
    severity: 'Critical',
    effect: 'deny',
    does: 'deny all traffic to ports that no Linkerd Server and authorization open',
    hint: 'ask the namespace owner for a Server and an AuthorizationPolicy for every port your pods serve',
  },
  'all-authenticated': {
    severity: 'Warning',
    effect: 'require',
    does: 'admit only meshed clients (mTLS) on ports no Linkerd Server selects',
    hint: 'call these pods from meshed workloads only, or ask for a Server that admits your client',
  },
  'cluster-authenticated': {
    severity: 'Warning',
    effect: 'require',
    does: 'admit only meshed clients from the cluster network on ports no Linkerd Server selects',
    hint: 'call these pods from meshed workloads in the cluster only, or ask for a Server that admits your client',
  },
  'cluster-unauthenticated': {
    severity: 'Warning',
    effect: 'restrict',
    does: 'admit only clients from the cluster network on ports no Linkerd Server selects',
    hint: 'reach these pods from inside the cluster, or ask for a Server that admits your client',
  },
  audit: {
    severity: 'Info',
    effect: 'audit',
    does: 'admit every client and log those a stricter policy would deny',
    hint: 'nothing to change yet; read the proxy logs to see what a stricter policy would deny',
  },
};

export function linkerdNamespaceConstraints(
  object: KubernetesObject,
  _context: AdapterContext,
): ConstraintDraft[] {
  const name = object.metadata?.name;
  const annotations = isStringRecord(object.metadata?.annotations) ? object.metadata.annotations : {};
  if (
    typeof name !== 'string' ||
    name === '' ||
    annotations[LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION] === undefined
  )
    return [];
  const policy = readChoice(
    annotations[LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION],
    `metadata.annotations["${LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION}"]`,
    POLICIES,
    'all-unauthenticated',
  );
  if (policy === LINKERD_PERMISSIVE_POLICY) return [];
  const outcome = OUTCOMES[policy];
  const namespace: Text = [namespaceName(name)];
  const hint = text`${outcome.hint}`;
  return [
    {
      id: 'linkerd-default-inbound-policy',
      name: LINKERD_DEFAULT_INBOUND_CONSTRAINT,
      displayName: [LINKERD_DEFAULT_INBOUND_CONSTRAINT],
      type: 'MeshPolicy',
      severity: outcome.severity,
      effect: outcome.effect,
      adapter: 'mesh',
      // The Namespace belongs to the namespace itself: its own viewer sees the name.
      source: { kind: 'Namespace', apiVersion: 'v1', name, namespace: name },
      scope: { kind: 'namespace', namespace: name },
      resourceTargets: [...WORKLOAD_RESOURCES],
      tags: ['mesh', 'linkerd', 'default-inbound-policy', policy],
      summary: text`Linkerd's default inbound policy "${policy}" in ${namespace}: the proxies of meshed pods ${outcome.does}`,
      remediationHint: hint,
      remediation: {
        summary: hint,
        steps: [
          {
            type: 'cli',
            description: text`See the namespace's Linkerd annotations`,
            command: text`kubectl get namespace ${namespace} -o jsonpath='{.metadata.annotations}'`,
            requiresPrivilege: 'developer',
            automated: true,
          },
          askOwnerStep(
            text`Ask the owner of namespace ${namespace} for a Server and AuthorizationPolicy that admit your client`,
            'namespace-admin',
          ),
        ],
      },
    },
  ];
}
