import { record, records, securityOf, type ContainerEntry, type Fields, type PodView } from './pod-fields';

// The checks of the Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/),
// as k8s.io/pod-security-admission implements them, each with the level and the first Kubernetes
// minor version it applies from. A check returns the failing fields with paths relative to the pod.

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export interface PodSecurityFailure {
  /** The check's id as pod-security-admission names it: `privileged`, `runAsNonRoot`, ... */
  check: string;
  path: string;
  message: string;
  /**
   * The offending values as Kyverno's pod-security fork reports them (its field error's BadValue),
   * which `podSecurity.exclude[].values` is matched against; recorded for the capability checks only.
   */
  badValues?: readonly string[];
}

export interface PodSecurityCheck {
  id: string;
  level: 'baseline' | 'restricted';
  /** Minor version (1.N) the check applies from. */
  sinceMinor: number;
  /** Windows pods are exempt (restricted checks that have no meaning there, 1.25+). */
  skipWindows?: boolean;
  run(pod: PodView, minor: number): PodSecurityFailure[];
}

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const SAFE_SYSCTLS: Array<[string, number]> = [
  ['kernel.shm_rmid_forced', 0],
  ['net.ipv4.ip_local_port_range', 0],
  ['net.ipv4.tcp_syncookies', 0],
  ['net.ipv4.ping_group_range', 0],
  ['net.ipv4.ip_unprivileged_port_start', 22],
  ['net.ipv4.ip_local_reserved_ports', 27],
  ['net.ipv4.tcp_keepalive_time', 29],
  ['net.ipv4.tcp_fin_timeout', 29],
  ['net.ipv4.tcp_keepalive_intvl', 29],
  ['net.ipv4.tcp_keepalive_probes', 29],
];

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

function perContainer(
  pod: PodView,
  check: string,
  test: (
    entry: ContainerEntry,
    security: Fields,
  ) => { path: string; message: string; badValues?: readonly string[] } | undefined,
): PodSecurityFailure[] {
  return pod.containers.flatMap((entry) => {
    const failure = test(entry, securityOf(entry));
    return failure ? [{ check, ...failure }] : [];
  });
}

/**
 * A field judged in each container's securityContext: `problem` says what is wrong with one
 * securityContext (`is privileged`), or undefined.
 */
function containersField(
  pod: PodView,
  check: string,
  field: string,
  problem: (securityContext: Fields) => string | undefined,
): PodSecurityFailure[] {
  return perContainer(pod, check, (entry, security) => {
    const containerProblem = problem(security);
    return containerProblem
      ? { path: `${entry.path}.securityContext.${field}`, message: `${entry.label} ${containerProblem}` }
      : undefined;
  });
}

/** As containersField, the pod's own securityContext first. */
export function podAndContainers(
  pod: PodView,
  check: string,
  field: string,
  problem: (securityContext: Fields) => string | undefined,
): PodSecurityFailure[] {
  const podProblem = problem(pod.podSecurity);
  const podFailures = podProblem
    ? [{ check, path: `spec.securityContext.${field}`, message: `the pod ${podProblem}` }]
    : [];
  return podFailures.concat(containersField(pod, check, field, problem));
}

const hostNamespaces: PodSecurityCheck = {
  id: 'hostNamespaces',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    (['hostNetwork', 'hostPID', 'hostIPC'] as const)
      .filter((field) => pod.spec[field] === true)
      .map((field) => ({
        check: 'hostNamespaces',
        path: `spec.${field}`,
        message: `the pod sets ${field}: true`,
      })),
};

const privileged: PodSecurityCheck = {
  id: 'privileged',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    containersField(pod, 'privileged', 'privileged', (security) =>
      security.privileged === true ? 'is privileged' : undefined,
    ),
};

const windowsHostProcess: PodSecurityCheck = {
  id: 'windowsHostProcess',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    podAndContainers(pod, 'windowsHostProcess', 'windowsOptions.hostProcess', (security) =>
      record(security.windowsOptions).hostProcess === true ? 'runs as a Windows host process' : undefined,
    ),
};

const baselineCapabilities: PodSecurityCheck = {
  id: 'capabilities_baseline',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    perContainer(pod, 'capabilities_baseline', (entry, security) => {
      const add = record(security.capabilities).add;
      const added: unknown[] = Array.isArray(add) ? add : [];
      const forbidden = added.filter(
        (capability) => typeof capability !== 'string' || !BASELINE_CAPABILITIES.has(capability),
      );
      return forbidden.length > 0
        ? {
            path: `${entry.path}.securityContext.capabilities.add`,
            message: `${entry.label} adds capabilities ${forbidden.map(String).join(', ')}`,
            badValues: forbidden.map(String),
          }
        : undefined;
    }),
};

const hostPathVolumes: PodSecurityCheck = {
  id: 'hostPathVolumes',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    records(pod.spec.volumes).flatMap((volume, index) =>
      volume.hostPath !== undefined
        ? [
            {
              check: 'hostPathVolumes',
              path: `spec.volumes[${index}].hostPath`,
              message: `volume "${String(volume.name)}" is a hostPath volume`,
            },
          ]
        : [],
    ),
};

const hostPorts: PodSecurityCheck = {
  id: 'hostPorts',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    pod.containers.flatMap((entry) =>
      records(entry.container.ports).flatMap((port, index) =>
        typeof port.hostPort === 'number' && port.hostPort !== 0
          ? [
              {
                check: 'hostPorts',
                path: `${entry.path}.ports[${index}].hostPort`,
                message: `${entry.label} uses host port ${port.hostPort}`,
              },
            ]
          : [],
      ),
    ),
};

const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';

function badAppArmorType(profile: unknown): string | undefined {
  const type = record(profile).type;
  return type === 'Unconfined' ? type : undefined;
}

const appArmor: PodSecurityCheck = {
  id: 'appArmorProfile',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) => {
    const failures: PodSecurityFailure[] = [];
    for (const [key, value] of Object.entries(record(pod.metadata.annotations)))
      if (
        key.startsWith(APPARMOR_ANNOTATION) &&
        typeof value === 'string' &&
        value !== 'runtime/default' &&
        !value.startsWith('localhost/')
      )
        failures.push({
          check: 'appArmorProfile',
          path: `metadata.annotations["${key}"]`,
          message: `AppArmor profile "${value}" is not allowed`,
        });
    if (badAppArmorType(pod.podSecurity.appArmorProfile))
      failures.push({
        check: 'appArmorProfile',
        path: 'spec.securityContext.appArmorProfile.type',
        message: 'the pod sets an Unconfined AppArmor profile',
      });
    return failures.concat(
      perContainer(pod, 'appArmorProfile', (entry, security) =>
        badAppArmorType(security.appArmorProfile)
          ? {
              path: `${entry.path}.securityContext.appArmorProfile.type`,
              message: `${entry.label} sets an Unconfined AppArmor profile`,
            }
          : undefined,
      ),
    );
  },
};

function badSeLinux(options: unknown): string | undefined {
  const selinux = record(options);
  if (typeof selinux.type === 'string' && !SELINUX_TYPES.has(selinux.type))
    return `SELinux type "${selinux.type}"`;
  if (typeof selinux.user === 'string' && selinux.user !== '') return 'a custom SELinux user';
  if (typeof selinux.role === 'string' && selinux.role !== '') return 'a custom SELinux role';
  return undefined;
}

const seLinux: PodSecurityCheck = {
  id: 'seLinuxOptions',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    podAndContainers(pod, 'seLinuxOptions', 'seLinuxOptions', (security) => {
      const problem = badSeLinux(security.seLinuxOptions);
      return problem ? `sets ${problem}` : undefined;
    }),
};

const procMount: PodSecurityCheck = {
  id: 'procMount',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod) =>
    containersField(pod, 'procMount', 'procMount', (security) =>
      security.procMount !== undefined && security.procMount !== 'Default'
        ? `sets procMount ${String(security.procMount)}`
        : undefined,
    ),
};

const baselineSeccomp: PodSecurityCheck = {
  id: 'seccompProfile_baseline',
  level: 'baseline',
  sinceMinor: 19,
  run: (pod) =>
    podAndContainers(pod, 'seccompProfile_baseline', 'seccompProfile.type', (security) =>
      record(security.seccompProfile).type === 'Unconfined'
        ? 'sets an Unconfined seccomp profile'
        : undefined,
    ),
};

const sysctls: PodSecurityCheck = {
  id: 'sysctls',
  level: 'baseline',
  sinceMinor: 0,
  run: (pod, minor) => {
    const allowed = new Set(SAFE_SYSCTLS.filter(([, since]) => since <= minor).map(([name]) => name));
    return records(pod.podSecurity.sysctls).flatMap((sysctl, index) =>
      typeof sysctl.name === 'string' && allowed.has(sysctl.name)
        ? []
        : [
            {
              check: 'sysctls',
              path: `spec.securityContext.sysctls[${index}]`,
              message: `sysctl ${String(sysctl.name)} is not a safe sysctl`,
            },
          ],
    );
  },
};

export const BASELINE_CHECKS: readonly PodSecurityCheck[] = [
  windowsHostProcess,
  hostNamespaces,
  privileged,
  baselineCapabilities,
  hostPathVolumes,
  hostPorts,
  appArmor,
  seLinux,
  procMount,
  baselineSeccomp,
  sysctls,
];
