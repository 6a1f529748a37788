import { podAndContainers, type PodSecurityCheck, type PodSecurityFailure } from './checks';
import { record, records, securityOf } from './pod-fields';

// The restricted level's own checks (on top of every baseline check).

const ALLOWED_VOLUME_SOURCES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

const volumeTypes: PodSecurityCheck = {
  id: 'restrictedVolumes',
  level: 'restricted',
  sinceMinor: 0,
  run: (pod) =>
    records(pod.spec.volumes).flatMap((volume, index) => {
      const sources = Object.keys(volume).filter((key) => key !== 'name');
      const forbidden = sources.filter((source) => !ALLOWED_VOLUME_SOURCES.has(source));
      return forbidden.map((source) => ({
        check: 'restrictedVolumes',
        path: `spec.volumes[${index}].${source}`,
        message: `volume "${String(volume.name)}" uses ${source}, which the restricted level does not allow`,
      }));
    }),
};

const privilegeEscalation: PodSecurityCheck = {
  id: 'allowPrivilegeEscalation',
  level: 'restricted',
  sinceMinor: 8,
  skipWindows: true,
  run: (pod) =>
    pod.containers.flatMap((entry) =>
      securityOf(entry).allowPrivilegeEscalation === false
        ? []
        : [
            {
              check: 'allowPrivilegeEscalation',
              path: `${entry.path}.securityContext.allowPrivilegeEscalation`,
              message: `${entry.label} must set securityContext.allowPrivilegeEscalation=false`,
            },
          ],
    ),
};

const runAsNonRoot: PodSecurityCheck = {
  id: 'runAsNonRoot',
  level: 'restricted',
  sinceMinor: 0,
  run: (pod) => {
    const podValue = pod.podSecurity.runAsNonRoot;
    const failures: PodSecurityFailure[] = [];
    if (podValue === false)
      failures.push({
        check: 'runAsNonRoot',
        path: 'spec.securityContext.runAsNonRoot',
        message: 'the pod sets runAsNonRoot: false',
      });
    for (const entry of pod.containers) {
      const own = securityOf(entry).runAsNonRoot;
      if (own === true || (own === undefined && podValue === true)) continue;
      failures.push({
        check: 'runAsNonRoot',
        path: `${entry.path}.securityContext.runAsNonRoot`,
        message: `${entry.label} must set securityContext.runAsNonRoot=true (or the pod must)`,
      });
    }
    return failures;
  },
};

const runAsUser: PodSecurityCheck = {
  id: 'runAsUser',
  level: 'restricted',
  sinceMinor: 23,
  run: (pod) =>
    podAndContainers(pod, 'runAsUser', 'runAsUser', (security) =>
      security.runAsUser === 0 ? 'runs as user 0 (root)' : undefined,
    ),
};

function allowedSeccomp(type: unknown): boolean {
  return type === 'RuntimeDefault' || type === 'Localhost';
}

const restrictedSeccomp: PodSecurityCheck = {
  id: 'seccompProfile_restricted',
  level: 'restricted',
  sinceMinor: 19,
  skipWindows: true,
  run: (pod) => {
    const podType = record(pod.podSecurity.seccompProfile).type;
    const failures: PodSecurityFailure[] = [];
    if (podType !== undefined && !allowedSeccomp(podType))
      failures.push({
        check: 'seccompProfile_restricted',
        path: 'spec.securityContext.seccompProfile.type',
        message: `the pod's seccomp profile ${String(podType)} must be RuntimeDefault or Localhost`,
      });
    for (const entry of pod.containers) {
      const own = record(securityOf(entry).seccompProfile).type;
      if (allowedSeccomp(own) || (own === undefined && allowedSeccomp(podType))) continue;
      failures.push({
        check: 'seccompProfile_restricted',
        path: `${entry.path}.securityContext.seccompProfile.type`,
        message: `${entry.label} must set securityContext.seccompProfile.type to RuntimeDefault or Localhost (or the pod must)`,
      });
    }
    return failures;
  },
};

const restrictedCapabilities: PodSecurityCheck = {
  id: 'capabilities_restricted',
  level: 'restricted',
  sinceMinor: 22,
  skipWindows: true,
  run: (pod) =>
    pod.containers.flatMap((entry) => {
      const capabilities = record(securityOf(entry).capabilities);
      const drop = Array.isArray(capabilities.drop) ? capabilities.drop : [];
      const add = Array.isArray(capabilities.add) ? capabilities.add : [];
      const failures: PodSecurityFailure[] = [];
      if (!drop.includes('ALL'))
        failures.push({
          check: 'capabilities_restricted',
          path: `${entry.path}.securityContext.capabilities.drop`,
          message: `${entry.label} must set securityContext.capabilities.drop=["ALL"]`,
          // Kyverno reports the capabilities dropped instead of ALL, none when nothing is dropped.
          badValues: drop.map(String),
        });
      const extra = add.filter((capability) => capability !== 'NET_BIND_SERVICE');
      if (extra.length > 0)
        failures.push({
          check: 'capabilities_restricted',
          path: `${entry.path}.securityContext.capabilities.add`,
          message: `${entry.label} adds ${extra.map(String).join(', ')}; only NET_BIND_SERVICE may be added`,
          badValues: extra.map(String),
        });
      return failures;
    }),
};

export const RESTRICTED_CHECKS: readonly PodSecurityCheck[] = [
  volumeTypes,
  privilegeEscalation,
  runAsNonRoot,
  runAsUser,
  restrictedSeccomp,
  restrictedCapabilities,
];
