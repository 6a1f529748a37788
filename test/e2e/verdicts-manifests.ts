// Objects of the verdicts end-to-end test (verdicts.test.ts): ValidatingAdmissionPolicies the API
// server enforces (Deny bindings with matchConditions, variables, messageExpression, a ConfigMap
// param; a Warn binding), Pod Security Admission namespaces, and the Deployments and Pods whose
// verdicts are compared with what the server does. Nothing here says what the verdict should be.

export type Manifest = Record<string, unknown>;

export const VAP_NAMESPACE = 'verdicts';
/** Bindings select namespaces by this label, so no other test namespace is affected. */
const SELECTED = { 'forewarn.e2e/verdicts': 'on' };
export const EXEMPT_LABEL = 'forewarn.e2e/exempt';
const ADMISSION = 'admissionregistration.k8s.io/v1';

const RULES = [
  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] },
  { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
];
const CONTAINERS_VARIABLE = {
  name: 'containers',
  expression: "object.kind == 'Pod' ? object.spec.containers : object.spec.template.spec.containers",
};

function policy(name: string, spec: Manifest): Manifest {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: RULES }, ...spec },
  };
}

function binding(name: string, actions: string[], extra: Manifest = {}): Manifest {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: actions,
      matchResources: { namespaceSelector: { matchLabels: SELECTED } },
      ...extra,
    },
  };
}

export const REPLICA_LIMITS = 'replica-limits';

/** The namespace, the ConfigMap param and three policies with their bindings. */
export const admissionPolicies: Manifest[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: VAP_NAMESPACE, labels: SELECTED } },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: REPLICA_LIMITS, namespace: VAP_NAMESPACE },
    data: { maxReplicas: '3' },
  },
  policy('require-memory-limits', {
    matchConditions: [
      {
        name: 'not-exempt',
        expression: `!has(object.metadata.labels) || !('${EXEMPT_LABEL}' in object.metadata.labels) || object.metadata.labels['${EXEMPT_LABEL}'] != 'true'`,
      },
    ],
    variables: [
      CONTAINERS_VARIABLE,
      {
        name: 'unlimited',
        expression:
          "variables.containers.filter(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) || quantity(c.resources.limits.memory).isGreaterThan(quantity('1Gi'))).map(c, c.name)",
      },
    ],
    validations: [
      {
        expression: 'size(variables.unlimited) == 0',
        messageExpression:
          "'containers need a memory limit of at most 1Gi: ' + variables.unlimited.join(', ')",
        reason: 'Invalid',
      },
    ],
  }),
  binding('require-memory-limits', ['Deny']),
  policy('max-replicas', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: [RULES[1]] },
    validations: [
      {
        expression: '!has(object.spec.replicas) || object.spec.replicas <= int(params.data.maxReplicas)',
        messageExpression:
          "'replicas ' + string(object.spec.replicas) + ' exceed the limit of ' + params.data.maxReplicas",
      },
    ],
  }),
  binding('max-replicas', ['Deny'], {
    paramRef: { name: REPLICA_LIMITS, namespace: VAP_NAMESPACE, parameterNotFoundAction: 'Deny' },
  }),
  policy('trusted-registry', {
    variables: [CONTAINERS_VARIABLE],
    validations: [
      {
        expression: "variables.containers.all(c, c.image.startsWith('registry.example.com/'))",
        message: 'images must come from registry.example.com',
      },
    ],
  }),
  binding('trusted-registry', ['Warn']),
  // Policies that read fields the API server defaults (issue 21): the manifests below never set them.
  policy('no-always-pull', {
    variables: [CONTAINERS_VARIABLE],
    validations: [
      {
        expression: "variables.containers.all(c, c.imagePullPolicy != 'Always')",
        message: 'images must be pinned to a version: pull policy Always',
      },
    ],
  }),
  binding('no-always-pull', ['Deny']),
  policy('patient-probes', {
    variables: [CONTAINERS_VARIABLE],
    validations: [
      {
        expression:
          'variables.containers.all(c, !has(c.livenessProbe) || (c.livenessProbe.periodSeconds >= 10 && c.livenessProbe.failureThreshold >= 3))',
        message: 'liveness probes must wait at least 10 seconds and 3 failures',
      },
    ],
  }),
  binding('patient-probes', ['Deny']),
  policy('rollout-defaults', {
    matchConstraints: { resourceRules: [RULES[1]] },
    validations: [
      {
        expression:
          "object.spec.revisionHistoryLimit <= 10 && object.spec.strategy.type == 'RollingUpdate' && object.spec.template.spec.restartPolicy == 'Always' && object.spec.template.spec.terminationGracePeriodSeconds <= 30",
        message: 'rollouts keep at most 10 revisions and roll pods gracefully',
      },
    ],
  }),
  binding('rollout-defaults', ['Deny']),
  policy('pod-spec-defaults', {
    variables: [
      {
        name: 'podSpec',
        expression: "object.kind == 'Pod' ? object.spec : object.spec.template.spec",
      },
    ],
    validations: [
      {
        expression:
          "variables.podSpec.dnsPolicy == 'ClusterFirst' && variables.podSpec.schedulerName == 'default-scheduler' && variables.podSpec.containers.all(c, c.terminationMessagePolicy == 'File')",
        message: 'pods use cluster DNS and the default scheduler',
      },
    ],
  }),
  binding('pod-spec-defaults', ['Warn']),
  // CEL optional syntax, which the API server's CEL environment enables (issue 21).
  policy('optional-syntax', {
    validations: [
      {
        expression: `object.metadata.?labels[?'${EXEMPT_LABEL}'].orValue('false') != 'true' && [?object.metadata.?labels[?'app']].all(app, app != '')`,
        message: 'exemptions are reviewed',
      },
    ],
  }),
  binding('optional-syntax', ['Warn']),
];

interface ContainerOptions {
  name?: string;
  image?: string;
  memory?: string;
  livenessProbe?: Manifest;
}

function container(options: ContainerOptions = {}): Manifest {
  return {
    name: options.name ?? 'app',
    image: options.image ?? 'registry.example.com/app:1',
    ...(options.memory ? { resources: { limits: { memory: options.memory } } } : {}),
    ...(options.livenessProbe ? { livenessProbe: options.livenessProbe } : {}),
  };
}

function pod(
  name: string,
  containers: Manifest[],
  labels: Record<string, string> = {},
  spec: Manifest = {},
): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: VAP_NAMESPACE, labels: { app: name, ...labels } },
    spec: { ...spec, containers },
  };
}

function deployment(
  name: string,
  containers: Manifest[],
  options: { replicas?: number; labels?: Record<string, string>; spec?: Manifest } = {},
): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: VAP_NAMESPACE, labels: { app: name, ...options.labels } },
    spec: {
      ...options.spec,
      replicas: options.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers } },
    },
  };
}

/** Passing and violating objects for the admission policies (each name says what it tries). */
export const admissionPolicyObjects: Manifest[] = [
  deployment('limited', [container({ memory: '256Mi' }), container({ name: 'sidecar', memory: '64Mi' })]),
  deployment('sidecar-unlimited', [container({ memory: '256Mi' }), container({ name: 'sidecar' })]),
  deployment('too-much-memory', [container({ memory: '2Gi' })]),
  deployment('exempt-unlimited', [container()], { labels: { [EXEMPT_LABEL]: 'true' } }),
  deployment('five-replicas', [container({ memory: '256Mi' })], { replicas: 5 }),
  deployment('three-replicas', [container({ memory: '256Mi' })], { replicas: 3 }),
  pod('bare', [container()]),
  pod('limited-pod', [container({ memory: '128Mi' })]),
  pod('outside-registry', [container({ memory: '128Mi', image: 'docker.io/library/nginx:1.27' })]),
  pod('outside-registry-unlimited', [container({ image: 'docker.io/library/nginx:1.27' })]),
  // Judged on what the server defaults (issue 21): pull policy from the tag, probe timings, rollout fields.
  pod('latest-image', [container({ memory: '128Mi', image: 'registry.example.com/app:latest' })]),
  pod('untagged-image', [container({ memory: '128Mi', image: 'registry.example.com/app' })]),
  pod('digest-image', [
    container({ memory: '128Mi', image: `registry.example.com/app@sha256:${'c'.repeat(64)}` }),
  ]),
  pod('default-probe', [container({ memory: '128Mi', livenessProbe: { httpGet: { port: 8080 } } })]),
  pod('hasty-probe', [
    container({ memory: '128Mi', livenessProbe: { httpGet: { port: 8080 }, periodSeconds: 2 } }),
  ]),
  deployment('default-rollout', [container({ memory: '256Mi' })]),
  deployment('long-history', [container({ memory: '256Mi' })], { spec: { revisionHistoryLimit: 20 } }),
  deployment('untagged-rollout', [container({ memory: '256Mi', image: 'registry.example.com/app' })]),
  pod('custom-dns', [container({ memory: '128Mi' })], {}, { dnsPolicy: 'Default' }),
];

/** Objects the server rejects once the policies are in force (verdicts.test.ts waits for them). */
export const enforcementProbes = {
  /** Only require-memory-limits denies it. */
  unlimitedPod: pod('probe', [container({ name: 'probe' })]),
  /** Only max-replicas denies it, with the limit its ConfigMap param sets. */
  fiveReplicas: deployment('probe', [container({ name: 'probe', memory: '64Mi' })], { replicas: 5 }),
};

export const PSA_NAMESPACES: Manifest[] = [
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'psa-restricted', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
  },
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: 'psa-baseline',
      labels: {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v1.29',
      },
    },
  },
];

/** The level a namespace of PSA_NAMESPACES enforces (its `enforce` label). */
export function enforcedLevel(namespace: string): string {
  const found = PSA_NAMESPACES.find((item) => (item.metadata as Manifest).name === namespace);
  const labels = ((found?.metadata as Manifest | undefined)?.labels ?? {}) as Record<string, string>;
  const level = labels['pod-security.kubernetes.io/enforce'];
  if (!level) throw new Error(`${namespace} is not a Pod Security namespace of PSA_NAMESPACES`);
  return level;
}

type SecurityChange = (podSpec: Manifest, containerSecurity: Manifest) => void;

/** A pod that meets `restricted`, changed by one field per variant (each breaks one check). */
const SECURITY_VARIANTS: Record<string, SecurityChange> = {
  compliant: () => undefined,
  // A privileged container cannot also set allowPrivilegeEscalation=false (API validation).
  privileged: (_pod, security) => {
    security.privileged = true;
    delete security.allowPrivilegeEscalation;
  },
  'host-network': (podSpec) => {
    podSpec.hostNetwork = true;
  },
  // The server defaults each port's hostPort to its containerPort on the host network (issue 21).
  'host-network-port': (podSpec) => {
    podSpec.hostNetwork = true;
    (podSpec.containers as Manifest[])[0].ports = [{ containerPort: 9100 }];
  },
  'run-as-root': (podSpec) => {
    delete (podSpec.securityContext as Manifest).runAsNonRoot;
  },
  'privilege-escalation': (_pod, security) => {
    security.allowPrivilegeEscalation = true;
  },
  'added-capability': (_pod, security) => {
    security.capabilities = { drop: ['ALL'], add: ['SYS_ADMIN'] };
  },
  'seccomp-unconfined': (podSpec) => {
    (podSpec.securityContext as Manifest).seccompProfile = { type: 'Unconfined' };
  },
};

export function securityPod(variant: string, namespace: string): Manifest {
  const containerSecurity: Manifest = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  const podSpec: Manifest = {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ name: 'app', image: 'registry.example.com/app:1', securityContext: containerSecurity }],
  };
  SECURITY_VARIANTS[variant](podSpec, containerSecurity);
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: variant, namespace }, spec: podSpec };
}

export const SECURITY_VARIANT_NAMES = Object.keys(SECURITY_VARIANTS);

/** A Deployment whose pod template breaks `restricted`: admitted, its pods are not. */
export function privilegedDeployment(namespace: string): Manifest {
  const template = securityPod('privileged', namespace);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'privileged-web', namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'privileged-web' } },
      template: { metadata: { labels: { app: 'privileged-web' } }, spec: template.spec },
    },
  };
}
