// @ts-check
'use strict';

// Admission reviews as a real API server sends them, each distinct (its own name, uids and labels),
// for the admission benchmark: the memo of identical bodies must not answer for evaluation.

const { WORKLOAD_LABELS } = require('./cluster-objects');

/**
 * The fieldsV1 of a Deployment `kubectl apply` created: the fields the manager owns, as the API
 * server records them in `managedFields` (a large part of every real review's bytes).
 * @param {Record<string, string>} labels
 */
function appliedDeploymentFields(labels) {
  const labelFields = Object.fromEntries(Object.keys(labels).map((key) => [`f:${key}`, {}]));
  return {
    'f:metadata': {
      'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
      'f:labels': { '.': {}, ...labelFields },
    },
    'f:spec': {
      'f:progressDeadlineSeconds': {},
      'f:replicas': {},
      'f:revisionHistoryLimit': {},
      'f:selector': {},
      'f:strategy': {
        'f:rollingUpdate': { '.': {}, 'f:maxSurge': {}, 'f:maxUnavailable': {} },
        'f:type': {},
      },
      'f:template': {
        'f:metadata': { 'f:labels': { '.': {}, ...labelFields } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"web"}': {
              '.': {},
              'f:image': {},
              'f:imagePullPolicy': {},
              'f:name': {},
              'f:ports': {
                '.': {},
                'k:{"containerPort":8080,"protocol":"TCP"}': {
                  '.': {},
                  'f:containerPort': {},
                  'f:name': {},
                  'f:protocol': {},
                },
              },
              'f:resources': { '.': {}, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } },
              'f:terminationMessagePath': {},
              'f:terminationMessagePolicy': {},
            },
          },
          'f:dnsPolicy': {},
          'f:restartPolicy': {},
          'f:schedulerName': {},
          'f:securityContext': {},
          'f:terminationGracePeriodSeconds': {},
        },
      },
    },
  };
}

/** Labels of one distinct review's Deployment: the WORKLOAD_LABELS plus per-review ones. */
const DISTINCT_LABELS = {
  ...WORKLOAD_LABELS,
  'app.kubernetes.io/instance': 'web-@SEQUENCE@',
  'app.kubernetes.io/version': '1.@SEQUENCE@.0',
};

const DISTINCT_CONTAINER = {
  name: 'web',
  image: 'registry.example.com/web:1.@SEQUENCE@.0',
  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
  resources: { requests: { cpu: '100m', memory: '128Mi' } },
};

/**
 * The Deployment of a distinct review as the API server holds it after defaulting, with the
 * metadata it sets (uid, generation, creationTimestamp, managedFields) and kubectl's annotation.
 * @param {string} namespace
 */
function defaultedDeployment(namespace) {
  const labels = DISTINCT_LABELS;
  const applied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web-@SEQUENCE@', namespace, labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [DISTINCT_CONTAINER] } },
    },
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web-@SEQUENCE@',
      namespace,
      uid: '@OBJECT_UID@',
      generation: 1,
      creationTimestamp: '2026-11-25T12:00:00Z',
      labels,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n` },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: '2026-11-25T12:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: appliedDeploymentFields(labels),
        },
      ],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { creationTimestamp: null, labels },
        spec: {
          containers: [
            {
              ...DISTINCT_CONTAINER,
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {},
  };
}

/**
 * Distinct Deployment CREATE reviews for a namespace, as the API server builds them for `kubectl
 * apply`: the defaulted object with uid, creationTimestamp, the last-applied annotation and
 * `managedFields`, a name, uid and labels of its own per review (so no two bodies are equal, as in a
 * cluster), plus the review's own uid, userInfo and options. Returns `sequence => review text`; the
 * text is built once and the varying parts substituted, so the load generator spends little on it.
 * Every review keeps the WORKLOAD_LABELS, so the namespace's constraints select each one.
 * @param {string} namespace
 * @returns {(sequence: number) => string}
 */
function distinctDeploymentReviews(namespace) {
  const review = {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: '@REVIEW_UID@',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: 'web-@SEQUENCE@',
      namespace,
      operation: 'CREATE',
      userInfo: {
        username: 'developer@example.com',
        uid: 'b1a4e7c2-3f8d-4c55-9a61-0d7e2f4c9b10',
        groups: ['developers', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': ['X509SHA256=5b2c0e3f'] },
      },
      object: defaultedDeployment(namespace),
      oldObject: null,
      dryRun: false,
      options: {
        kind: 'CreateOptions',
        apiVersion: 'meta.k8s.io/v1',
        fieldManager: 'kubectl-client-side-apply',
      },
    },
  };
  const parts = JSON.stringify(review).split(/@(SEQUENCE|OBJECT_UID|REVIEW_UID)@/);
  /**
   * @param {number} sequence
   * @param {string} kind one hex digit telling the object's uid from the review's
   */
  const uid = (sequence, kind) =>
    `${kind}${sequence.toString(16).padStart(7, '0')}-6393-11e8-b7cc-42010a800002`;
  return (sequence) => {
    let text = parts[0];
    for (let position = 1; position < parts.length; position += 2) {
      const name = parts[position];
      text +=
        name === 'SEQUENCE'
          ? String(sequence)
          : name === 'OBJECT_UID'
            ? uid(sequence, 'a')
            : uid(sequence, 'b');
      text += parts[position + 1];
    }
    return text;
  };
}

module.exports = { distinctDeploymentReviews };
