import { isRecord } from '../../../model/kubernetes';
import { evaluatePodSecurity, type PodSecurityFailure, type PodSecurityLevel } from '../pod-security';
import { NotEvaluable } from './kyverno-errors';
import { wildcardMatches } from './scalar-pattern';

// `validate.podSecurity.exclude` as Kyverno 1.19 applies it (pkg/pss/evaluate.go,
// https://kyverno.io/docs/writing-policies/validate/#pod-security): an exclusion names a control and
// optionally images, a restricted field and values. Without images it exempts what the pod fails
// with its containers replaced by one empty container (pod-level fields, and container fields by
// their path with indexes as `*`); with images it exempts what the matching containers fail, for
// those containers. Each failure the exclusion finds removes one matching failure of the pod.
// `values` limit it to failures whose reported values all match them: known for the capability
// controls, `unknown` for the others.

/** Kyverno's control names (pkg/pss/utils/mapping.go) → the Pod Security Admission check ids. */
const CONTROL_CHECKS: Readonly<Record<string, readonly string[]>> = {
  Capabilities: ['capabilities_baseline', 'capabilities_restricted'],
  Seccomp: ['seccompProfile_baseline', 'seccompProfile_restricted'],
  'Privileged Containers': ['privileged'],
  'Host Ports': ['hostPorts'],
  '/proc Mount Type': ['procMount'],
  HostProcess: ['windowsHostProcess'],
  SELinux: ['seLinuxOptions'],
  'Host Namespaces': ['hostNamespaces'],
  'HostPath Volumes': ['hostPathVolumes'],
  Sysctls: ['sysctls'],
  AppArmor: ['appArmorProfile'],
  'Privilege Escalation': ['allowPrivilegeEscalation'],
  'Running as Non-root': ['runAsNonRoot'],
  'Running as Non-root user': ['runAsUser'],
  'Volume Types': ['restrictedVolumes'],
};

const CONTAINER_PATH = /^spec\.(containers|initContainers|ephemeralContainers)\[(\d+)\]/;
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;

const starred = (path: string): string => path.replace(/\[\d+\]/g, '[*]');

function containerAt(pod: Record<string, unknown>, path: string): Record<string, unknown> | undefined {
  const match = CONTAINER_PATH.exec(path);
  if (!match) return undefined;
  const spec = isRecord(pod.spec) ? pod.spec : {};
  const list = spec[match[1]];
  const container: unknown = Array.isArray(list) ? list[Number(match[2])] : undefined;
  return isRecord(container) ? container : undefined;
}

function removeFirst(failures: PodSecurityFailure[], test: (failure: PodSecurityFailure) => boolean): void {
  const index = failures.findIndex(test);
  if (index !== -1) failures.splice(index, 1);
}

/**
 * Whether an exclusion limited to `values` covers a failure: every value Kyverno reports for it
 * matches one of them (wildcards allowed); a failure with no reported value is covered.
 */
function valuesCovered(failure: PodSecurityFailure, values: readonly string[]): boolean {
  if (values.length === 0) return true;
  if (failure.badValues === undefined)
    throw new NotEvaluable('a podSecurity exclusion limited to values is not evaluated for this control');
  return failure.badValues.every((bad) => values.some((value) => wildcardMatches(value, bad)));
}

/** The failures left after the exclusions (`exclude` as written in the policy). */
export function applyPodSecurityExclusions(
  failures: readonly PodSecurityFailure[],
  exclude: unknown,
  pod: Record<string, unknown>,
  level: PodSecurityLevel,
  version: string,
): PodSecurityFailure[] {
  const remaining = [...failures];
  const exclusions = Array.isArray(exclude) ? exclude.filter(isRecord) : [];
  const spec = isRecord(pod.spec) ? pod.spec : {};
  for (const exclusion of exclusions) {
    const checks = CONTROL_CHECKS[String(exclusion.controlName)] ?? [];
    const values = Array.isArray(exclusion.values)
      ? exclusion.values.filter((value): value is string => typeof value === 'string')
      : [];
    const coversValues = (excluded: PodSecurityFailure) => valuesCovered(excluded, values);
    const restrictedField = typeof exclusion.restrictedField === 'string' ? exclusion.restrictedField : '';
    const images = Array.isArray(exclusion.images)
      ? exclusion.images.filter((image): image is string => typeof image === 'string')
      : [];
    if (images.length === 0) {
      const probe = {
        metadata: pod.metadata,
        spec: {
          ...spec,
          containers: [{ name: 'fake' }],
          initContainers: undefined,
          ephemeralContainers: undefined,
        },
      };
      for (const excluded of evaluatePodSecurity(probe, level, version)) {
        if (!checks.includes(excluded.check)) continue;
        const field = starred(excluded.path);
        if (restrictedField && field !== restrictedField) continue;
        if (!coversValues(excluded)) continue;
        removeFirst(
          remaining,
          (failure) => failure.check === excluded.check && starred(failure.path) === field,
        );
      }
      continue;
    }
    const matching: Record<string, unknown> = {};
    for (const list of CONTAINER_LISTS) {
      const containers = Array.isArray(spec[list]) ? spec[list].filter(isRecord) : [];
      const kept = containers.filter(
        (container) =>
          typeof container.image === 'string' &&
          images.some((image) => wildcardMatches(image, container.image as string)),
      );
      if (kept.length > 0) matching[list] = kept;
    }
    const matchingPod = {
      metadata: { name: isRecord(pod.metadata) ? pod.metadata.name : undefined },
      spec: matching,
    };
    for (const excluded of evaluatePodSecurity(matchingPod, level, version)) {
      if (!checks.includes(excluded.check)) continue;
      const field = starred(excluded.path);
      if (restrictedField && field !== restrictedField) continue;
      if (!coversValues(excluded)) continue;
      const container = containerAt(matchingPod, excluded.path);
      removeFirst(
        remaining,
        (failure) =>
          failure.check === excluded.check &&
          starred(failure.path) === field &&
          (!container || containerAt(pod, failure.path)?.name === container.name),
      );
    }
  }
  return remaining;
}
