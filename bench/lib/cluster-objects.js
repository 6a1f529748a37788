'use strict';

// Synthetic clusters for the benchmarks: namespaces filled with policy objects of every namespaced
// kind the adapters read (network policies, quotas, limit ranges, Cilium, Istio, Kyverno). Each
// template yields a known number of constraints, so a namespace can be filled to an exact count;
// the benchmarks still check the count the real adapters produced instead of trusting this file.

/** The labels of the workload the admission benchmark deploys; policies below select them. */
const WORKLOAD_LABELS = { app: 'web', tier: 'frontend' };

const TEMPLATES = [
  {
    constraints: 2,
    build: (namespace, name) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name, namespace },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'gateway' } } }], ports: [{ port: 8443 }] }],
        egress: [{ to: [{ namespaceSelector: {} }], ports: [{ protocol: 'UDP', port: 53 }] }],
      },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name, namespace },
      spec: { hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', pods: '20' } },
      status: {
        hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', pods: '20' },
        used: { 'requests.cpu': '3200m', 'requests.memory': '7680Mi', pods: '11' },
      },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name, namespace },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'cilium.io/v2',
      kind: 'CiliumNetworkPolicy',
      metadata: { name, namespace },
      spec: {
        endpointSelector: { matchLabels: { 'k8s:app': 'web' } },
        egress: [{ toFQDNs: [{ matchName: 'api.example.com' }], toPorts: [{ ports: [{ port: '443' }] }] }],
      },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name, namespace },
      spec: { action: 'DENY', rules: [{ to: [{ operation: { paths: ['/debug/*'] } }] }] },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'kyverno.io/v1',
      kind: 'Policy',
      metadata: { name, namespace },
      spec: {
        validationFailureAction: 'Enforce',
        rules: [
          {
            name: 'require-limits',
            match: { any: [{ resources: { kinds: ['Deployment', 'Pod'] } }] },
            validate: { message: 'limits are required', pattern: { spec: {} } },
          },
        ],
      },
    }),
  },
  {
    constraints: 1,
    build: (namespace, name) => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name, namespace },
      spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '512Mi' } }] },
    }),
  },
];

const SINGLE_CONSTRAINT_TEMPLATES = TEMPLATES.filter((template) => template.constraints === 1);

function namespaceObject(name) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { team: `team-${name}` } } };
}

/**
 * Policy objects of one namespace yielding exactly `constraintCount` constraints. `uidPrefix` gives
 * every object a UID, as objects from an API server have (the index keys by it).
 */
function policyObjects(namespace, constraintCount, uidPrefix = namespace) {
  const objects = [];
  let remaining = constraintCount;
  for (let position = 0; remaining > 0; position++) {
    let template = TEMPLATES[position % TEMPLATES.length];
    if (template.constraints > remaining)
      template = SINGLE_CONSTRAINT_TEMPLATES[position % SINGLE_CONSTRAINT_TEMPLATES.length];
    const object = template.build(namespace, `policy-${position}`);
    object.metadata.uid = `${uidPrefix}-${position}`;
    objects.push(object);
    remaining -= template.constraints;
  }
  return objects;
}

/** A Deployment CREATE review for a namespace, as the API server sends it. */
function deploymentReview(namespace, uid = '705ab4f5-6393-11e8-b7cc-42010a800002') {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace, labels: WORKLOAD_LABELS },
    spec: {
      replicas: 2,
      selector: { matchLabels: WORKLOAD_LABELS },
      template: {
        metadata: { labels: WORKLOAD_LABELS },
        spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1.4.2' }] },
      },
    },
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: 'web',
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'developer@example.com', groups: ['system:authenticated'] },
      object: deployment,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** CRDs for the custom kinds above, so an API server (the test one) serves them. */
function customResourceDefinitions() {
  const definitions = [
    { group: 'cilium.io', version: 'v2', kind: 'CiliumNetworkPolicy', plural: 'ciliumnetworkpolicies' },
    {
      group: 'security.istio.io',
      version: 'v1',
      kind: 'AuthorizationPolicy',
      plural: 'authorizationpolicies',
    },
    { group: 'kyverno.io', version: 'v1', kind: 'Policy', plural: 'policies' },
  ];
  return definitions.map(({ group, version, kind, plural }) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  }));
}

module.exports = {
  WORKLOAD_LABELS,
  namespaceObject,
  policyObjects,
  deploymentReview,
  customResourceDefinitions,
};
