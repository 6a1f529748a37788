// @ts-check
'use strict';

// The Kubernetes API test server (test/support) holding a cluster of the size a platform team runs:
// namespaces with policies of every namespaced kind the adapters read (bench/lib/cluster-objects),
// and an inventory of Pods (owned by ReplicaSets, as Deployments create them), Deployments and
// Services. `run-changes` applies a mixed churn at a fixed rate: Pods replaced (deleted and created
// under a new name, as a rollout does) and relabelled, Deployments scaled, Services relabelled, and
// policies changed (a severity override), round-robin over the cluster. Every fifth namespace is
// labelled `forewarn.io/bench-group: canary`; `risk-policy` creates (or deletes) one Kyverno
// ClusterPolicy, enforced, requiring an `owner` label on the Deployments of those namespaces: the
// single policy change of the workloads-at-risk benchmark (1,000 Deployments at full size).
// argv[2]: JSON `{"namespaces", "constraints", "pods", "deployments", "services"}`.

require('../lib/register-typescript');
const { performance } = require('node:perf_hooks');
const { KubernetesApiTestServer } = require('../../test/support/kubernetes-api-server');
const { z } = require('zod');
const { customResourceDefinitions, namespaceObject, policyObjects } = require('../lib/cluster-objects');
const { reportReady, serveCommands } = require('../lib/processes');

const settings = z
  .object({
    namespaces: z.number().int().positive(),
    constraints: z.number().int().nonnegative(),
    pods: z.number().int().nonnegative(),
    deployments: z.number().int().nonnegative(),
    services: z.number().int().nonnegative(),
  })
  .parse(JSON.parse(process.argv[2]));

/**
 * A Pod as a ReplicaSet creates it, with the status the kubelet reports.
 * @param {string} namespace
 * @param {string} name
 * @param {number} generation
 */
function pod(namespace, name, generation) {
  const labels = { app: 'web', tier: 'frontend', 'pod-template-hash': `h${generation % 7}` };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `web-h${generation % 7}`,
          uid: `rs-${namespace}`,
          controller: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/web:1.4.2',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
      ],
      serviceAccountName: 'default',
      nodeName: `node-${generation % 50}`,
    },
    status: { phase: 'Running', podIP: `10.1.${generation % 250}.${generation % 200}` },
  };
}

/**
 * @param {string} namespace
 * @param {string} name
 * @param {number} replicas
 */
function deployment(namespace, name, replicas) {
  const labels = { app: 'web', tier: 'frontend' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1.4.2' }] },
      },
    },
  };
}

/**
 * @param {string} namespace
 * @param {string} name
 * @param {number} generation
 */
function service(namespace, name, generation) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: 'web', generation: String(generation) } },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
  };
}

const CANARY_LABELS = { 'forewarn.io/bench-group': 'canary' };

/** @param {number} position */
const isCanary = (position) => position % 5 === 0;

/** The ClusterPolicy of `risk-policy`: every Deployment of a canary namespace fails it. */
const RISK_POLICY = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'require-owner-on-canaries' },
  spec: {
    validationFailureAction: 'Enforce',
    rules: [
      {
        name: 'require-owner',
        match: {
          any: [{ resources: { kinds: ['Deployment'], namespaceSelector: { matchLabels: CANARY_LABELS } } }],
        },
        validate: {
          message: 'an owner label is required',
          pattern: { metadata: { labels: { owner: '?*' } } },
        },
      },
    ],
  },
};

/** `count` items spread over the namespaces, as `[namespace, index in namespace]`. */
function* spread(/** @type {number} */ count, /** @type {string[]} */ namespaces) {
  for (let position = 0; position < count; position++)
    yield [namespaces[position % namespaces.length], Math.floor(position / namespaces.length)];
}

/**
 * Creates the cluster's objects; returns what the churn changes.
 * @param {KubernetesApiTestServer} server
 */
function populate(server) {
  for (const definition of customResourceDefinitions()) server.create(definition);
  const namespaces = Array.from({ length: settings.namespaces }, (_, position) => `team-${position}`);
  const base = Math.floor(settings.constraints / namespaces.length);
  const withOneMore = settings.constraints - base * namespaces.length;
  /** @type {Array<ReturnType<typeof policyObjects>[number]>} */
  const policies = [];
  namespaces.forEach((namespace, position) => {
    const object = namespaceObject(namespace);
    if (isCanary(position)) object.metadata.labels = { ...object.metadata.labels, ...CANARY_LABELS };
    server.create(object);
    for (const object of policyObjects(namespace, base + (position < withOneMore ? 1 : 0))) {
      server.create(object);
      policies.push(object);
    }
  });
  /** @type {{namespace: string, name: string, generation: number}[]} */
  const pods = [];
  for (const [namespace, index] of spread(settings.pods, namespaces)) {
    const entry = { namespace: String(namespace), name: `web-${index}`, generation: 0 };
    server.create(pod(entry.namespace, entry.name, 0));
    pods.push(entry);
  }
  /** @type {{namespace: string, name: string, generation: number}[]} */
  const deployments = [];
  for (const [namespace, index] of spread(settings.deployments, namespaces)) {
    const entry = { namespace: String(namespace), name: `web-${index}`, generation: 2 };
    server.create(deployment(entry.namespace, entry.name, 2));
    deployments.push(entry);
  }
  /** @type {{namespace: string, name: string, generation: number}[]} */
  const services = [];
  for (const [namespace, index] of spread(settings.services, namespaces)) {
    const entry = { namespace: String(namespace), name: `web-${index}`, generation: 0 };
    server.create(service(entry.namespace, entry.name, 0));
    services.push(entry);
  }
  const canaryDeployments = deployments.filter(({ namespace }) =>
    isCanary(Number(namespace.slice('team-'.length))),
  ).length;
  return { policies, pods, deployments, services, canaryDeployments };
}

/**
 * One change of the mix per call, chosen by the change's position.
 * @param {KubernetesApiTestServer} server
 * @param {ReturnType<typeof populate>} cluster
 */
function changer(server, { policies, pods, deployments, services }) {
  let next = 0;
  return () => {
    const position = next++;
    const slot = position % 10;
    if (slot < 4 && pods.length) {
      // A rollout: the pod is replaced by one with a new name.
      const entry = pods[position % pods.length];
      server.delete('v1', 'Pod', entry.namespace, entry.name);
      entry.generation++;
      entry.name = `${entry.name.replace(/-g\d+$/, '')}-g${entry.generation}`;
      server.create(pod(entry.namespace, entry.name, entry.generation));
    } else if (slot < 6 && pods.length) {
      const entry = pods[(position * 7) % pods.length];
      entry.generation++;
      server.update(pod(entry.namespace, entry.name, entry.generation));
    } else if (slot < 8 && deployments.length) {
      const entry = deployments[position % deployments.length];
      entry.generation = (entry.generation % 5) + 1;
      server.update(deployment(entry.namespace, entry.name, entry.generation));
    } else if (slot < 9 && services.length) {
      const entry = services[position % services.length];
      entry.generation++;
      server.update(service(entry.namespace, entry.name, entry.generation));
    } else if (policies.length) {
      const object = policies[position % policies.length];
      const severity = position % 20 < 10 ? 'Critical' : 'Warning';
      // Without the generator's uid: the server gave the object its own.
      const { name, namespace } = object.metadata;
      server.update({
        ...object,
        metadata: { name, namespace, annotations: { 'forewarn.io/severity': severity } },
      });
    }
  };
}

function main() {
  const server = new KubernetesApiTestServer({ historyLimit: 20_000 });
  const cluster = populate(server);
  const change = changer(server, cluster);

  /**
   * @param {import('../lib/processes').Commands['risk-policy']['command']} command
   * @returns {import('../lib/processes').Commands['risk-policy']['result']}
   */
  const riskPolicy = ({ present }) => {
    if (present) server.create(structuredClone(RISK_POLICY));
    else server.delete('kyverno.io/v1', 'ClusterPolicy', undefined, RISK_POLICY.metadata.name);
    return { atEpochMs: performance.timeOrigin + performance.now(), workloads: cluster.canaryDeployments };
  };

  /**
   * @param {import('../lib/processes').Commands['run-changes']['command']} command
   * @returns {Promise<import('../lib/processes').Commands['run-changes']['result']>}
   */
  const runChanges = ({ rate, durationMs }) =>
    new Promise((resolve) => {
      const started = performance.now();
      let applied = 0;
      const timer = setInterval(() => {
        const elapsed = performance.now() - started;
        const due = Math.min(Math.floor((elapsed / 1000) * rate), Math.floor((durationMs / 1000) * rate));
        for (; applied < due; applied++) change();
        if (elapsed >= durationMs) {
          clearInterval(timer);
          resolve({ changes: applied, seconds: (performance.now() - started) / 1000 });
        }
      }, 10);
    });

  // The request log keeps every request; at this size and rate it would be this process's memory.
  const clearLog = setInterval(() => server.clearRequests(), 1000);
  serveCommands({ 'run-changes': runChanges, 'risk-policy': riskPolicy });
  process.on('SIGTERM', () => {
    clearInterval(clearLog);
    void server.stop().then(() => process.exit(0));
  });
  void server.start().then(() =>
    reportReady('servers/cluster-api.js', {
      kubeConfigYaml: server.kubeConfigYaml(),
      url: server.url,
      token: server.token,
    }),
  );
}

main();
