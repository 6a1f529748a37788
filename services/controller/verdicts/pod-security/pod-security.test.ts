import { evaluatePodSecurity, minorOfVersion } from '.';

// One passing and one failing pod per check of each level (Pod Security Standards), and versions.

type Pod = { metadata: Record<string, unknown>; spec: Record<string, unknown> };

const restrictedContainer = {
  name: 'web',
  image: 'web:1',
  securityContext: {
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    capabilities: { drop: ['ALL'] },
  },
};

function restrictedPod(): Pod {
  return {
    metadata: { name: 'p' },
    spec: {
      containers: [structuredClone(restrictedContainer)],
      volumes: [{ name: 'cfg', configMap: { name: 'c' } }],
    },
  };
}

function withContainerSecurity(security: Record<string, unknown>): Pod {
  const pod = restrictedPod();
  const container = (pod.spec.containers as Array<{ securityContext: Record<string, unknown> }>)[0];
  container.securityContext = { ...container.securityContext, ...security };
  return pod;
}

function withSpec(spec: Record<string, unknown>): Pod {
  const pod = restrictedPod();
  pod.spec = { ...pod.spec, ...spec };
  return pod;
}

const baselineFailures: Array<[string, Pod, string]> = [
  ['hostNamespaces', withSpec({ hostNetwork: true }), 'spec.hostNetwork'],
  [
    'privileged',
    withContainerSecurity({ privileged: true }),
    'spec.containers[0].securityContext.privileged',
  ],
  [
    'capabilities_baseline',
    withContainerSecurity({ capabilities: { drop: ['ALL'], add: ['SYS_ADMIN'] } }),
    'spec.containers[0].securityContext.capabilities.add',
  ],
  [
    'hostPathVolumes',
    withSpec({ volumes: [{ name: 'root', hostPath: { path: '/' } }] }),
    'spec.volumes[0].hostPath',
  ],
  [
    'hostPorts',
    (() => {
      const pod = restrictedPod();
      (pod.spec.containers as Array<Record<string, unknown>>)[0].ports = [
        { containerPort: 80, hostPort: 80 },
      ];
      return pod;
    })(),
    'spec.containers[0].ports[0].hostPort',
  ],
  [
    'appArmorProfile',
    {
      ...restrictedPod(),
      metadata: { annotations: { 'container.apparmor.security.beta.kubernetes.io/web': 'unconfined' } },
    },
    'metadata.annotations["container.apparmor.security.beta.kubernetes.io/web"]',
  ],
  [
    'seLinuxOptions',
    withContainerSecurity({ seLinuxOptions: { type: 'spc_t' } }),
    'spec.containers[0].securityContext.seLinuxOptions',
  ],
  [
    'procMount',
    withContainerSecurity({ procMount: 'Unmasked' }),
    'spec.containers[0].securityContext.procMount',
  ],
  [
    'seccompProfile_baseline',
    withContainerSecurity({ seccompProfile: { type: 'Unconfined' } }),
    'spec.containers[0].securityContext.seccompProfile.type',
  ],
  [
    'sysctls',
    withSpec({ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } }),
    'spec.securityContext.sysctls[0]',
  ],
  [
    'windowsHostProcess',
    withContainerSecurity({ windowsOptions: { hostProcess: true } }),
    'spec.containers[0].securityContext.windowsOptions.hostProcess',
  ],
];

const restrictedFailures: Array<[string, Pod, string]> = [
  [
    'restrictedVolumes',
    withSpec({ volumes: [{ name: 'nfs', nfs: { server: 'x', path: '/' } }] }),
    'spec.volumes[0].nfs',
  ],
  [
    'allowPrivilegeEscalation',
    withContainerSecurity({ allowPrivilegeEscalation: true }),
    'spec.containers[0].securityContext.allowPrivilegeEscalation',
  ],
  [
    'runAsNonRoot',
    withContainerSecurity({ runAsNonRoot: false }),
    'spec.containers[0].securityContext.runAsNonRoot',
  ],
  ['runAsUser', withContainerSecurity({ runAsUser: 0 }), 'spec.containers[0].securityContext.runAsUser'],
  [
    'seccompProfile_restricted',
    withContainerSecurity({ seccompProfile: undefined }),
    'spec.containers[0].securityContext.seccompProfile.type',
  ],
  [
    'capabilities_restricted',
    withContainerSecurity({ capabilities: { drop: ['NET_RAW'] } }),
    'spec.containers[0].securityContext.capabilities.drop',
  ],
];

describe('Pod Security Standards', () => {
  it('a restricted pod passes every level', () => {
    for (const level of ['privileged', 'baseline', 'restricted'] as const)
      expect(evaluatePodSecurity(restrictedPod(), level)).toEqual([]);
  });

  it('a plain pod passes baseline and fails restricted', () => {
    const plain = { spec: { containers: [{ name: 'web', image: 'web:1' }] } };
    expect(evaluatePodSecurity(plain, 'baseline')).toEqual([]);
    expect(
      evaluatePodSecurity(plain, 'restricted')
        .map((failure) => failure.check)
        .sort(),
    ).toEqual([
      'allowPrivilegeEscalation',
      'capabilities_restricted',
      'runAsNonRoot',
      'seccompProfile_restricted',
    ]);
  });

  it.each(baselineFailures)(
    'baseline check %s fails its pod at baseline and restricted, with the path',
    (check, pod, path) => {
      for (const level of ['baseline', 'restricted'] as const) {
        const failures = evaluatePodSecurity(pod, level);
        expect(failures).toContainEqual(expect.objectContaining({ check, path }));
      }
      expect(evaluatePodSecurity(pod, 'privileged')).toEqual([]);
    },
  );

  it.each(restrictedFailures)('restricted check %s fails only at restricted', (check, pod, path) => {
    expect(evaluatePodSecurity(pod, 'restricted')).toContainEqual(expect.objectContaining({ check, path }));
    expect(evaluatePodSecurity(pod, 'baseline').filter((failure) => failure.check === check)).toEqual([]);
  });

  it('applies checks by version: restricted capabilities from 1.22, runAsUser from 1.23', () => {
    const addsCaps = withContainerSecurity({ capabilities: { drop: ['NET_RAW'] } });
    expect(evaluatePodSecurity(addsCaps, 'restricted', 'v1.21')).toEqual([]);
    expect(evaluatePodSecurity(addsCaps, 'restricted', 'v1.22')).not.toEqual([]);
    const root = withContainerSecurity({ runAsUser: 0 });
    expect(evaluatePodSecurity(root, 'restricted', 'v1.22')).toEqual([]);
    expect(evaluatePodSecurity(root, 'restricted', 'latest')).not.toEqual([]);
  });

  it('exempts Windows pods from the Linux-only restricted checks from 1.25', () => {
    const windows = {
      spec: { os: { name: 'windows' }, containers: [{ name: 'w', securityContext: { runAsNonRoot: true } }] },
    };
    expect(evaluatePodSecurity(windows, 'restricted', 'v1.25')).toEqual([]);
    expect(evaluatePodSecurity(windows, 'restricted', 'v1.24')).not.toEqual([]);
  });

  it('prefixes paths for pod templates', () => {
    const [failure] = evaluatePodSecurity(withSpec({ hostPID: true }), 'baseline', 'latest', {
      pathPrefix: 'spec.template',
    });
    expect(failure.path).toBe('spec.template.spec.hostPID');
  });

  it('reads versions as pod-security-admission does', () => {
    expect(minorOfVersion('v1.29')).toBe(29);
    expect(minorOfVersion('latest')).toBeGreaterThanOrEqual(30);
    expect(minorOfVersion('garbage')).toBe(minorOfVersion('latest'));
  });

  it('fixing what the evidence names makes the pod pass (property over every check)', () => {
    for (const [, pod] of [...baselineFailures, ...restrictedFailures]) {
      const fixed = structuredClone(pod);
      // The evidence paths are the fields to change: restoring them from the compliant pod fixes it.
      for (const failure of evaluatePodSecurity(fixed, 'restricted'))
        resetPath(fixed, failure.path, restrictedPod());
      expect(evaluatePodSecurity(fixed, 'restricted')).toEqual([]);
    }
  });
});

/** Sets the value at a path (`a.b[0].c`, `x["k"]`) to the one in `source`, deleting it when absent there. */
function resetPath(target: unknown, path: string, source: unknown): void {
  const keys = [...path.matchAll(/([^.[\]"]+)|\["([^"]+)"\]|\[(\d+)\]/g)].map(
    (match) => match[1] ?? match[2] ?? Number(match[3]),
  );
  let into = target as Record<string | number, unknown>;
  let from = source as Record<string | number, unknown> | undefined;
  for (const key of keys.slice(0, -1)) {
    into = (into[key] ??= {}) as Record<string | number, unknown>;
    from = from?.[key] as Record<string | number, unknown> | undefined;
  }
  const last = keys[keys.length - 1];
  if (from && from[last] !== undefined) into[last] = structuredClone(from[last]);
  else delete into[last];
}
