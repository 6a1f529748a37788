// The everyday-changes corpus (issue 31): what a team applies to a namespace in a normal week, in
// order, each step a real `kubectl apply` (create, then updates of the same objects). The namespace
// has a quota, a LimitRange with defaults and two admission policies of the kind teams write (a
// replica cap, and a rule that reads `oldObject`). Nothing here says what the API server answers:
// the test compares Forewarn's prediction of each step with the server's own answer.

export type Manifest = Record<string, unknown>;

export const NAMESPACE = 'everyday';

/** Standing objects of the namespace, created before the changes (and enforced before they start). */
export const standing: Manifest[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'team-quota', namespace: NAMESPACE },
    // `kube-root-ca.crt` is one of the two ConfigMaps; one Service.
    spec: { hard: { 'requests.cpu': '4', 'count/configmaps': '2', services: '1' } },
  },
  {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'container-defaults', namespace: NAMESPACE },
    spec: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '256Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
        },
      ],
    },
  },
  ...policy('replica-cap', 'object.spec.replicas <= 6', 'at most 6 replicas'),
  ...policy(
    'no-sudden-scale-down',
    "request.operation != 'UPDATE' || object.spec.replicas * 2 >= oldObject.spec.replicas",
    'replicas may not drop below half at once',
  ),
];

function policy(name: string, expression: string, message: string): Manifest[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } },
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['deployments'],
            },
          ],
        },
        validations: [{ expression, message }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

const metadata = (name: string, labels: Record<string, string> = {}) => ({
  name,
  namespace: NAMESPACE,
  labels: { app: name, ...labels },
});

function deployment(
  replicas: number,
  options: { image?: string; cpu?: string; labels?: Record<string, string> } = {},
): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata('web', options.labels),
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: options.image ?? 'registry.example/web:1.0.0',
              resources: { requests: { cpu: options.cpu ?? '200m', memory: '128Mi' } },
            },
          ],
        },
      },
    },
  };
}

const configMap = (name: string, data: Record<string, string>): Manifest => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: metadata(name),
  data,
});

const service = (name: string, ports: number[]): Manifest => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: metadata(name),
  spec: { selector: { app: name }, ports: ports.map((port) => ({ name: `p${port}`, port })) },
});

const pod = (name: string, resources: Record<string, unknown>): Manifest => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: metadata(name),
  spec: { containers: [{ name, image: `registry.example/${name}:1`, resources }] },
});

const ingress = (paths: string[]): Manifest => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: metadata('web'),
  spec: {
    rules: [
      {
        host: 'web.example.com',
        http: {
          paths: paths.map((path) => ({
            path,
            pathType: 'Prefix',
            backend: { service: { name: 'web', port: { number: 80 } } },
          })),
        },
      },
    ],
  },
});

const claim = (storage: string): Manifest => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: metadata('data'),
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
});

const cronJob = (schedule: string): Manifest => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: metadata('nightly'),
  spec: {
    schedule,
    jobTemplate: {
      spec: {
        template: {
          spec: {
            restartPolicy: 'OnFailure',
            containers: [{ name: 'report', image: 'registry.example/report:2', resources: {} }],
          },
        },
      },
    },
  },
});

export interface Change {
  /** What a developer would call the change. */
  description: string;
  object: Manifest;
  /** A compliant change: its warning lines are counted. */
  compliant: boolean;
}

/** In order: later steps update what earlier ones created. */
export const changes: Change[] = [
  {
    description: 'new ConfigMap (the quota counts it: 2 of 2)',
    object: configMap('settings', { mode: 'a' }),
    compliant: true,
  },
  {
    description: 'ConfigMap edited at the count limit',
    object: configMap('settings', { mode: 'b' }),
    compliant: true,
  },
  {
    description: 'a third ConfigMap over the count limit',
    object: configMap('extra', { mode: 'a' }),
    compliant: false,
  },
  { description: 'new Deployment, 3 replicas', object: deployment(3), compliant: true },
  {
    description: 'image bump',
    object: deployment(3, { image: 'registry.example/web:1.0.1' }),
    compliant: true,
  },
  {
    description: 'new label',
    object: deployment(3, { image: 'registry.example/web:1.0.1', labels: { tier: 'frontend' } }),
    compliant: true,
  },
  {
    description: 'scale up 3 -> 5',
    object: deployment(5, { image: 'registry.example/web:1.0.1' }),
    compliant: true,
  },
  {
    description: 'scale up 5 -> 8 (over the cap)',
    object: deployment(8, { image: 'registry.example/web:1.0.1' }),
    compliant: false,
  },
  {
    description: 'scale down 5 -> 2 (below half)',
    object: deployment(2, { image: 'registry.example/web:1.0.1' }),
    compliant: false,
  },
  {
    description: 'scale down 5 -> 3',
    object: deployment(3, { image: 'registry.example/web:1.0.1' }),
    compliant: true,
  },
  {
    description: 'requests raised',
    object: deployment(3, { image: 'registry.example/web:1.0.1', cpu: '300m' }),
    compliant: true,
  },
  { description: 'new Service (the quota allows 1)', object: service('web', [80]), compliant: true },
  {
    description: 'Service port added at the count limit',
    object: service('web', [80, 443]),
    compliant: true,
  },
  {
    description: 'a second Service over the count limit',
    object: service('metrics', [9090]),
    compliant: false,
  },
  {
    description: 'Pod requesting 700m with no limit (the LimitRange default limit is 500m)',
    object: pod('batch-700m', { requests: { cpu: '700m' } }),
    compliant: false,
  },
  {
    description: 'Pod requesting 300m with no limit',
    object: pod('batch-300m', { requests: { cpu: '300m' } }),
    compliant: true,
  },
  { description: 'new Ingress', object: ingress(['/']), compliant: true },
  { description: 'Ingress path added', object: ingress(['/', '/api']), compliant: true },
  { description: 'new PersistentVolumeClaim', object: claim('1Gi'), compliant: true },
  { description: 'new CronJob', object: cronJob('0 2 * * *'), compliant: true },
  { description: 'CronJob schedule moved', object: cronJob('0 3 * * *'), compliant: true },
];
