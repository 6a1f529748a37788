import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type ConstraintDraft,
  type RemediationStepTemplate,
  type SourceObject,
} from '../../../model/constraint';
import { isStringRecord, type KubernetesObject } from '../../../model/kubernetes';
import {
  EXEMPT_RUNTIME_CLASS_TAG_PREFIX,
  isPodSecurityLevel,
  isPodSecurityVersion,
  POD_SECURITY_MODES,
  type PodSecurityLevel,
  type PodSecurityMode,
} from '../../../model/pod-security';
import { WORKLOAD_RESOURCES } from '../../../model/resources';
import { namespaceName, text, type Text } from '../../../model/text';
import { askOwnerStep } from '../shared/remediation';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';

// Pod Security Admission → one Admission constraint per mode (enforce, warn, audit) whose level is
// not `privileged`, read from the Namespace's labels `pod-security.kubernetes.io/<mode>[-version]`,
// or from the cluster default (`--pod-security-default`) when the namespace sets no level. As
// Pod Security Admission does, an invalid level is evaluated as `restricted` and an invalid version
// as `latest`. Named `pod-security/<mode>`, source kind Namespace (DESIGN.md section 3). A namespace
// the cluster exempts (`--pod-security-exempt-namespaces`) has none; exempt runtime classes
// (`--pod-security-exempt-runtime-classes`) travel as tags to the verdict, which lets their pods pass.

const LABEL_PREFIX = 'pod-security.kubernetes.io/';

const SEVERITY: Record<PodSecurityMode, Severity> = { enforce: 'Critical', warn: 'Warning', audit: 'Info' };
const EFFECT: Record<PodSecurityMode, Effect> = { enforce: 'deny', warn: 'warn', audit: 'audit' };

/** What the level asks of a pod, for the remediation line. */
const REQUIREMENTS: Record<Exclude<PodSecurityLevel, 'privileged'>, string> = {
  baseline: 'no privileged containers, host namespaces, hostPath volumes, host ports or added capabilities',
  restricted:
    'runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities drop ALL, seccompProfile RuntimeDefault, and everything baseline asks',
};

interface ModePolicy {
  mode: PodSecurityMode;
  level: Exclude<PodSecurityLevel, 'privileged'>;
  version: string;
  /** Why the policy is not simply the labels: the cluster default, or an invalid label value. */
  origin: 'label' | 'default' | 'invalid-level';
}

function readModePolicy(
  labels: Readonly<Record<string, string>>,
  mode: PodSecurityMode,
  context: AdapterContext,
): ModePolicy | undefined {
  const written = labels[`${LABEL_PREFIX}${mode}`];
  const writtenVersion = labels[`${LABEL_PREFIX}${mode}-version`];
  const fallback = context.podSecurityDefaults?.[mode];
  let level: PodSecurityLevel;
  let origin: ModePolicy['origin'] = 'label';
  if (written === undefined) {
    if (fallback === undefined) return undefined;
    level = fallback.level;
    origin = 'default';
  } else if (isPodSecurityLevel(written)) level = written;
  else {
    level = 'restricted';
    origin = 'invalid-level';
  }
  if (level === 'privileged') return undefined;
  const version = isPodSecurityVersion(writtenVersion)
    ? writtenVersion
    : origin === 'default' && writtenVersion === undefined && fallback
      ? fallback.version
      : 'latest';
  return { mode, level, version, origin };
}

function describe(policy: ModePolicy, namespace: Text): Text {
  // Level and version as the API server writes them in its own messages: `PodSecurity "baseline:v1.29"`.
  const standard = text`PodSecurity "${policy.level}:${policy.version}"`;
  const why =
    policy.origin === 'default'
      ? text` (the cluster default: the namespace sets no ${policy.mode} level)`
      : policy.origin === 'invalid-level'
        ? text` (its ${policy.mode} label is not a level; Pod Security Admission applies restricted)`
        : [];
  switch (policy.mode) {
    case 'enforce':
      return text`Pod Security Admission enforces ${standard} in ${namespace}${why}: Pods that break it are rejected; Deployments and other pod controllers are admitted, but their Pods are not created`;
    case 'warn':
      return text`Pod Security Admission warns when Pods or pod templates in ${namespace} break ${standard}${why}; they are still admitted`;
    case 'audit':
      return text`Pod Security Admission adds an audit annotation when Pods in ${namespace} break ${standard}${why}; nothing is blocked`;
  }
}

function steps(policy: ModePolicy, source: SourceObject, namespace: Text): RemediationStepTemplate[] {
  return [
    {
      type: 'cli',
      description: text`See the namespace's Pod Security labels`,
      command: text`kubectl get namespace ${namespace} --show-labels`,
      requiresPrivilege: 'developer',
      automated: true,
    },
    {
      type: 'cli',
      description: text`List the existing pods of the namespace that break the level (a server-side dry run)`,
      command: text`kubectl label --dry-run=server --overwrite namespace ${namespace} pod-security.kubernetes.io/enforce=${policy.level}`,
      requiresPrivilege: 'cluster-admin',
      automated: true,
    },
    askOwnerStep(
      text`Ask the admins of ${source.kind} ${namespace} for an exemption or a lower level if the workload truly needs more privileges`,
      'cluster-admin',
    ),
  ];
}

function buildConstraint(
  policy: ModePolicy,
  source: SourceObject & { namespace: string },
  exemptRuntimeClasses: readonly string[],
): ConstraintDraft {
  const namespace: Text = [namespaceName(source.namespace)];
  const remediationHint = text`make every container meet ${policy.level}: ${REQUIREMENTS[policy.level]}`;
  return {
    id: policy.mode,
    name: `pod-security/${policy.mode}`,
    displayName: [`pod-security/${policy.mode}`],
    type: 'Admission',
    severity: SEVERITY[policy.mode],
    effect: EFFECT[policy.mode],
    adapter: 'podsecurity',
    source,
    scope: { kind: 'namespace', namespace: source.namespace },
    resourceTargets: [...WORKLOAD_RESOURCES],
    tags: [
      'pod-security',
      policy.mode,
      // Level and version as tags too: the verdict evaluator reads what applies from the constraint
      // (podSecurityPolicyOfTags), the cluster default and the invalid-label rule included.
      policy.level,
      policy.version,
      ...(policy.origin === 'default' ? ['cluster-default'] : []),
      ...(policy.origin === 'invalid-level' ? ['invalid-label'] : []),
      ...exemptRuntimeClasses.map((runtimeClass) => `${EXEMPT_RUNTIME_CLASS_TAG_PREFIX}${runtimeClass}`),
    ],
    summary: describe(policy, namespace),
    remediationHint,
    remediation: { summary: remediationHint, steps: steps(policy, source, namespace) },
  };
}

export function podSecurityToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') throw new AdapterParseError('Namespace has no metadata.name');
  const labels = object.metadata?.labels ?? {};
  if (!isStringRecord(labels))
    throw new AdapterParseError(`Namespace ${name} has labels that are not strings`);
  // The Namespace is cluster-scoped, but its constraints belong to the namespace itself: its name is
  // the viewer's own namespace, never a foreign one.
  const source = { kind: 'Namespace', apiVersion: 'v1', name, namespace: name };
  const exemptions = context.podSecurityExemptions;
  if (exemptions?.namespaces.includes(name)) return [];
  return POD_SECURITY_MODES.map((mode) => readModePolicy(labels, mode, context))
    .filter((policy): policy is ModePolicy => policy !== undefined)
    .map((policy) => buildConstraint(policy, source, exemptions?.runtimeClasses ?? []));
}

export const podSecurityAdapter: Adapter = {
  name: 'podsecurity',
  kinds: POLICY_SOURCE_KINDS.podsecurity.kinds,
  toConstraints: (object, context) => podSecurityToConstraints(object, context),
};
