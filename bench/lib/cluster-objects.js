// @ts-check
'use strict';

// Synthetic clusters for the benchmarks: namespaces filled with policy objects of every namespaced
// kind the adapters read (network policies, quotas, limit ranges, Cilium, Istio, Kyverno). Each
// template yields a known number of constraints, so a namespace can be filled to an exact count;
// the benchmarks still check the count the real adapters produced instead of trusting this file.

/** The labels of the workload the admission benchmark deploys; policies below select them. */
const WORKLOAD_LABELS = { app: 'web', tier: 'frontend' };

/**
 * A policy object as the API server holds it: every object the benchmarks build is one.
 * @typedef {{
 *   apiVersion: string,
 *   kind: string,
 *   metadata: {name: string, namespace: string, uid?: string, managedFields?: object[]},
 *   spec: object,
 *   status?: object,
 * }} PolicyObject
 */

/**
 * A kind of policy object yielding `constraints` constraints. `body` builds a fresh spec (and
 * status) for every object, as objects read from an API server share nothing.
 * @param {number} constraints
 * @param {string} apiVersion
 * @param {string} kind
 * @param {() => {spec: object, status?: object}} body
 */
function template(constraints, apiVersion, kind, body) {
  return {
    constraints,
    /**
     * @param {string} namespace
     * @param {string} name
     * @returns {PolicyObject}
     */
    build: (namespace, name) => ({ apiVersion, kind, metadata: { name, namespace }, ...body() }),
  };
}

const TEMPLATES = [
  template(2, 'networking.k8s.io/v1', 'NetworkPolicy', () => ({
    spec: {
      podSelector: { matchLabels: { app: 'web' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'gateway' } } }], ports: [{ port: 8443 }] }],
      egress: [{ to: [{ namespaceSelector: {} }], ports: [{ protocol: 'UDP', port: 53 }] }],
    },
  })),
  template(1, 'v1', 'ResourceQuota', () => ({
    spec: { hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', pods: '20' } },
    status: {
      hard: { 'requests.cpu': '4', 'requests.memory': '8Gi', pods: '20' },
      used: { 'requests.cpu': '3200m', 'requests.memory': '7680Mi', pods: '11' },
    },
  })),
  template(1, 'networking.k8s.io/v1', 'NetworkPolicy', () => ({
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  })),
  template(1, 'cilium.io/v2', 'CiliumNetworkPolicy', () => ({
    spec: {
      endpointSelector: { matchLabels: { 'k8s:app': 'web' } },
      egress: [{ toFQDNs: [{ matchName: 'api.example.com' }], toPorts: [{ ports: [{ port: '443' }] }] }],
    },
  })),
  template(1, 'security.istio.io/v1', 'AuthorizationPolicy', () => ({
    spec: { action: 'DENY', rules: [{ to: [{ operation: { paths: ['/debug/*'] } }] }] },
  })),
  template(1, 'kyverno.io/v1', 'Policy', () => ({
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
  })),
  template(1, 'v1', 'LimitRange', () => ({
    spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '512Mi' } }] },
  })),
];

/**
 * The fieldsV1 of a value: `f:<key>` for every key, nested, as the API server records ownership.
 * @param {unknown} value
 * @returns {Record<string, unknown>}
 */
function fieldsOf(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([key, nested]) => [`f:${key}`, fieldsOf(nested)]));
}

const SINGLE_CONSTRAINT_TEMPLATES = TEMPLATES.filter((template) => template.constraints === 1);

/** @param {string} name */
function namespaceObject(name) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { team: `team-${name}` } } };
}

/**
 * Policy objects of one namespace yielding exactly `constraintCount` constraints. `uidPrefix` gives
 * every object a UID, as objects from an API server have (the index keys by it).
 * @param {string} namespace
 * @param {number} constraintCount
 * @param {string} [uidPrefix]
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
    // As read from an API server: every object carries its field managers.
    object.metadata.managedFields = [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: object.apiVersion,
        time: '2026-11-25T12:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {} } }, 'f:spec': fieldsOf(object.spec) },
      },
    ];
    objects.push(object);
    remaining -= template.constraints;
  }
  return objects;
}

/**
 * A Deployment CREATE review for a namespace, as the API server sends it.
 * @param {string} namespace
 * @param {string} [uid]
 */
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
      operation: /** @type {const} */ ('CREATE'),
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
    {
      group: 'cilium.io',
      version: 'v2',
      kind: 'CiliumNetworkPolicy',
      plural: 'ciliumnetworkpolicies',
      cluster: false,
    },
    {
      group: 'security.istio.io',
      version: 'v1',
      kind: 'AuthorizationPolicy',
      plural: 'authorizationpolicies',
      cluster: false,
    },
    { group: 'kyverno.io', version: 'v1', kind: 'Policy', plural: 'policies', cluster: false },
    { group: 'kyverno.io', version: 'v1', kind: 'ClusterPolicy', plural: 'clusterpolicies', cluster: true },
  ];
  return definitions.map(({ group, version, kind, plural, cluster }) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: cluster ? 'Cluster' : 'Namespaced',
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
