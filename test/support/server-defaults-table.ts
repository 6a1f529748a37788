import type { KubernetesObject } from '../../services/model/kubernetes';

// What the API server (v1.34) stores for fields a manifest leaves out: for each object, fields it
// does not set and the value the server gives them, read from pkg/apis/{core,apps,batch}/v1/defaults.go
// and their generated callers. The unit test (services/controller/verdicts/defaulting) checks Forewarn's
// defaulting against it; the e2e tier (test/e2e/defaulting.test.ts) creates every object with a
// server-side dry run and checks the server stores the same. `undefined`: the server sets nothing there.

export type FieldPath = Array<string | number>;

export interface DefaultedObject {
  /** A valid object the server admits (namespaced ones go in DEFAULTING_NAMESPACE). */
  object: KubernetesObject;
  expected: Array<[FieldPath, unknown]>;
}

export const DEFAULTING_NAMESPACE = 'defaulting';
const DIGEST = `sha256:${'a'.repeat(64)}`;

function meta(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, namespace: DEFAULTING_NAMESPACE, ...extra };
}

const template = (spec: Record<string, unknown>, labels: Record<string, string> = { app: 'web' }) => ({
  metadata: { labels },
  spec,
});
const containers = [{ name: 'app', image: 'registry.example.com/app' }];

/** The pod spec defaults; `resources: {}` where container 0 sets no resources. */
function podSpecDefaults(prefix: FieldPath, unsetResources = true): Array<[FieldPath, unknown]> {
  return [
    [[...prefix, 'restartPolicy'], 'Always'],
    [[...prefix, 'dnsPolicy'], 'ClusterFirst'],
    [[...prefix, 'schedulerName'], 'default-scheduler'],
    [[...prefix, 'securityContext'], {}],
    [[...prefix, 'terminationGracePeriodSeconds'], 30],
    [[...prefix, 'containers', 0, 'imagePullPolicy'], 'Always'],
    [[...prefix, 'containers', 0, 'terminationMessagePath'], '/dev/termination-log'],
    [[...prefix, 'containers', 0, 'terminationMessagePolicy'], 'File'],
    // Go structs are serialized even when empty, and admission sees them so.
    ...(unsetResources ? [[[...prefix, 'containers', 0, 'resources'], {}] as [FieldPath, unknown]] : []),
  ];
}

const C = ['spec', 'containers'];
const V = ['spec', 'volumes'];

export const SERVER_DEFAULTS: DefaultedObject[] = [
  {
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('pod'),
      spec: {
        initContainers: [{ name: 'init', image: 'busybox:latest' }],
        containers: [
          {
            name: 'latest',
            image: 'registry.example.com/app:latest',
            ports: [{ containerPort: 8080 }],
            env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
            resources: { limits: { memory: '128Mi', cpu: '500m' } },
            livenessProbe: { httpGet: { port: 8080 } },
            readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 5 },
            startupProbe: { grpc: { port: 9090 } },
            lifecycle: { preStop: { httpGet: { port: 8080 } } },
          },
          { name: 'untagged', image: 'registry.example.com/app' },
          { name: 'tagged', image: 'registry.example.com/app:1.2' },
          { name: 'digest', image: `registry.example.com/app@${DIGEST}` },
          { name: 'latest-digest', image: `registry.example.com/app:latest@${DIGEST}` },
          { name: 'explicit', image: 'registry.example.com/app', imagePullPolicy: 'Never' },
        ],
        volumes: [
          { name: 'scratch' },
          { name: 'secret', secret: { secretName: 'credentials' } },
          { name: 'config', configMap: { name: 'settings' } },
          {
            name: 'downward',
            downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
          },
          { name: 'projected', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
          { name: 'host', hostPath: { path: '/var/log' } },
          {
            name: 'claim',
            ephemeral: {
              volumeClaimTemplate: {
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              },
            },
          },
        ],
      },
    },
    expected: [
      ...podSpecDefaults(['spec'], false),
      [['spec', 'enableServiceLinks'], true],
      [['spec', 'initContainers', 0, 'imagePullPolicy'], 'Always'],
      [['spec', 'initContainers', 0, 'terminationMessagePolicy'], 'File'],
      [['spec', 'initContainers', 0, 'resources'], {}],
      [[...C, 1, 'imagePullPolicy'], 'Always'],
      [[...C, 2, 'imagePullPolicy'], 'IfNotPresent'],
      [[...C, 3, 'imagePullPolicy'], 'IfNotPresent'],
      [[...C, 4, 'imagePullPolicy'], 'Always'],
      [[...C, 5, 'imagePullPolicy'], 'Never'],
      [[...C, 0, 'ports', 0, 'protocol'], 'TCP'],
      [[...C, 0, 'ports', 0, 'hostPort'], undefined],
      [[...C, 0, 'env', 0, 'valueFrom', 'fieldRef', 'apiVersion'], 'v1'],
      [[...C, 0, 'resources', 'requests'], { memory: '128Mi', cpu: '500m' }],
      [[...C, 0, 'livenessProbe', 'timeoutSeconds'], 1],
      [[...C, 0, 'livenessProbe', 'periodSeconds'], 10],
      [[...C, 0, 'livenessProbe', 'successThreshold'], 1],
      [[...C, 0, 'livenessProbe', 'failureThreshold'], 3],
      [[...C, 0, 'livenessProbe', 'httpGet', 'path'], '/'],
      [[...C, 0, 'livenessProbe', 'httpGet', 'scheme'], 'HTTP'],
      [[...C, 0, 'readinessProbe', 'timeoutSeconds'], 5],
      [[...C, 0, 'readinessProbe', 'periodSeconds'], 10],
      [[...C, 0, 'startupProbe', 'grpc', 'service'], ''],
      [[...C, 0, 'startupProbe', 'failureThreshold'], 3],
      [[...C, 0, 'lifecycle', 'preStop', 'httpGet', 'path'], '/'],
      [[...C, 0, 'lifecycle', 'preStop', 'httpGet', 'scheme'], 'HTTP'],
      [[...V, 0, 'emptyDir'], {}],
      [[...V, 1, 'secret', 'defaultMode'], 420],
      [[...V, 2, 'configMap', 'defaultMode'], 420],
      [[...V, 3, 'downwardAPI', 'defaultMode'], 420],
      [[...V, 3, 'downwardAPI', 'items', 0, 'fieldRef', 'apiVersion'], 'v1'],
      [[...V, 4, 'projected', 'defaultMode'], 420],
      [[...V, 4, 'projected', 'sources', 0, 'serviceAccountToken', 'expirationSeconds'], 3600],
      [[...V, 5, 'hostPath', 'type'], ''],
      [[...V, 6, 'ephemeral', 'volumeClaimTemplate', 'spec', 'volumeMode'], 'Filesystem'],
      [[...V, 6, 'ephemeral', 'volumeClaimTemplate', 'metadata'], {}],
    ],
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('host-network'),
      spec: {
        hostNetwork: true,
        restartPolicy: 'OnFailure',
        containers: [{ name: 'app', image: 'registry.example.com/app:2', ports: [{ containerPort: 9100 }] }],
      },
    },
    expected: [
      [[...C, 0, 'ports', 0, 'hostPort'], 9100],
      [['spec', 'restartPolicy'], 'OnFailure'],
      [[...C, 0, 'imagePullPolicy'], 'IfNotPresent'],
    ],
  },
  {
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('deployment'),
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: template({
          containers: [{ ...containers[0], resources: { limits: { memory: '64Mi' } } }],
        }),
      },
    },
    expected: [
      [['spec', 'replicas'], 1],
      [
        ['spec', 'strategy'],
        { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      ],
      [['spec', 'revisionHistoryLimit'], 10],
      [['spec', 'progressDeadlineSeconds'], 600],
      ...podSpecDefaults(['spec', 'template', 'spec'], false),
      [['spec', 'template', 'metadata'], { labels: { app: 'web' } }],
      // What only a Pod gets: not in a template.
      [['spec', 'template', 'spec', 'enableServiceLinks'], undefined],
      [['spec', 'template', 'spec', 'containers', 0, 'resources', 'requests'], undefined],
    ],
  },
  {
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('recreate'),
      spec: {
        strategy: { type: 'Recreate' },
        selector: { matchLabels: { app: 'web' } },
        template: template({ containers }),
      },
    },
    expected: [[['spec', 'strategy'], { type: 'Recreate' }]],
  },
  {
    object: {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta('statefulset'),
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app: 'web' } },
        template: template({ containers }),
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    },
    expected: [
      [['spec', 'replicas'], 1],
      [['spec', 'podManagementPolicy'], 'OrderedReady'],
      [['spec', 'updateStrategy'], { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }],
      [['spec', 'persistentVolumeClaimRetentionPolicy'], { whenDeleted: 'Retain', whenScaled: 'Retain' }],
      [['spec', 'revisionHistoryLimit'], 10],
      [['spec', 'volumeClaimTemplates', 0, 'spec', 'volumeMode'], 'Filesystem'],
      [['spec', 'volumeClaimTemplates', 0, 'status', 'phase'], 'Pending'],
      [['spec', 'volumeClaimTemplates', 0, 'apiVersion'], 'v1'],
      [['spec', 'volumeClaimTemplates', 0, 'kind'], 'PersistentVolumeClaim'],
      ...podSpecDefaults(['spec', 'template', 'spec']),
    ],
  },
  {
    object: {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: meta('daemonset'),
      spec: { selector: { matchLabels: { app: 'web' } }, template: template({ containers }) },
    },
    expected: [
      [
        ['spec', 'updateStrategy'],
        { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      ],
      [['spec', 'revisionHistoryLimit'], 10],
      ...podSpecDefaults(['spec', 'template', 'spec']),
    ],
  },
  {
    object: {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: meta('replicaset'),
      spec: { selector: { matchLabels: { app: 'web' } }, template: template({ containers }) },
    },
    expected: [[['spec', 'replicas'], 1], ...podSpecDefaults(['spec', 'template', 'spec'])],
  },
  {
    object: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta('job'),
      spec: { template: template({ containers, restartPolicy: 'Never' }, { app: 'batch' }) },
    },
    expected: [
      [['metadata', 'labels', 'app'], 'batch'],
      [['spec', 'completions'], 1],
      [['spec', 'parallelism'], 1],
      [['spec', 'backoffLimit'], 6],
      [['spec', 'completionMode'], 'NonIndexed'],
      [['spec', 'suspend'], false],
      [['spec', 'podReplacementPolicy'], 'TerminatingOrFailed'],
      [['spec', 'manualSelector'], false],
      [['spec', 'template', 'spec', 'restartPolicy'], 'Never'],
      [['spec', 'template', 'spec', 'dnsPolicy'], 'ClusterFirst'],
    ],
  },
  {
    object: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: meta('indexed-job', { labels: { team: 'data' } }),
      spec: {
        completions: 3,
        completionMode: 'Indexed',
        backoffLimitPerIndex: 1,
        podFailurePolicy: { rules: [{ action: 'FailJob', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
        template: template({ containers, restartPolicy: 'Never' }, { app: 'batch' }),
      },
    },
    expected: [
      [['metadata', 'labels'], { team: 'data' }],
      [['spec', 'parallelism'], 1],
      [['spec', 'backoffLimit'], 2147483647],
      [['spec', 'podReplacementPolicy'], 'Failed'],
      [['spec', 'podFailurePolicy', 'rules', 0, 'onPodConditions', 0, 'status'], 'True'],
    ],
  },
  {
    object: {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: meta('cronjob'),
      spec: {
        schedule: '*/5 * * * *',
        jobTemplate: { spec: { template: template({ containers, restartPolicy: 'OnFailure' }) } },
      },
    },
    expected: [
      [['spec', 'concurrencyPolicy'], 'Allow'],
      [['spec', 'suspend'], false],
      [['spec', 'successfulJobsHistoryLimit'], 3],
      [['spec', 'failedJobsHistoryLimit'], 1],
      ...podSpecDefaults(['spec', 'jobTemplate', 'spec', 'template', 'spec']).filter(
        ([path]) => path[path.length - 1] !== 'restartPolicy',
      ),
      // A job template gets no Job defaults.
      [['spec', 'jobTemplate', 'spec', 'backoffLimit'], undefined],
      [['spec', 'jobTemplate', 'metadata'], {}],
    ],
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: meta('replicationcontroller'),
      spec: { template: template({ containers }) },
    },
    expected: [
      [['spec', 'replicas'], 1],
      [['spec', 'selector'], { app: 'web' }],
      [['metadata', 'labels'], { app: 'web' }],
      ...podSpecDefaults(['spec', 'template', 'spec']),
    ],
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: meta('podtemplate'),
      template: template({ containers }),
    },
    expected: podSpecDefaults(['template', 'spec']),
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('service'),
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    },
    expected: [
      [['spec', 'type'], 'ClusterIP'],
      [['spec', 'sessionAffinity'], 'None'],
      [['spec', 'ports', 0, 'protocol'], 'TCP'],
      [['spec', 'ports', 0, 'targetPort'], 80],
      [['spec', 'internalTrafficPolicy'], 'Cluster'],
      [['spec', 'externalTrafficPolicy'], undefined],
    ],
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('load-balancer'),
      spec: {
        type: 'LoadBalancer',
        sessionAffinity: 'ClientIP',
        selector: { app: 'web' },
        ports: [{ port: 443, targetPort: 'https' }],
      },
    },
    expected: [
      [['spec', 'externalTrafficPolicy'], 'Cluster'],
      [['spec', 'allocateLoadBalancerNodePorts'], true],
      [['spec', 'sessionAffinityConfig'], { clientIP: { timeoutSeconds: 10800 } }],
      [['spec', 'ports', 0, 'targetPort'], 'https'],
    ],
  },
  {
    object: { apiVersion: 'v1', kind: 'Secret', metadata: meta('secret'), data: { key: 'dmFsdWU=' } },
    expected: [[['type'], 'Opaque']],
  },
  {
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta('claim'),
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
    expected: [[['spec', 'volumeMode'], 'Filesystem']],
  },
  {
    object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'defaulted-namespace' } },
    expected: [[['metadata', 'labels', 'kubernetes.io/metadata.name'], 'defaulted-namespace']],
  },
];

/** The value at a path, `undefined` where there is none. */
export function valueAt(value: unknown, path: FieldPath): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
