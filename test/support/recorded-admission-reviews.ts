import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { groupOf, isRecord } from '../../services/model/kubernetes';
import { pluralOfKind } from '../../services/model/resources';
import { realworldDirectory } from './realworld-corpus';

// The AdmissionReviews of the recorded-answers test (test/integration/webhook/recorded-answers.test.ts):
// every namespaced object of the examples and of the team's real-world workloads, admitted into each
// namespace of the demo cluster (and one it does not have), as CREATE and UPDATE, as the API server
// builds a review (uid first, managedFields, userInfo), plus variants (v1beta1, five replicas) and
// malformed reviews. Built here from the source files at test time, so no real-world object is copied
// into the repository: the fixture holds only each case's id and the answers.

const REPOSITORY_ROOT = path.resolve(__dirname, '../..');
const NAMESPACES = ['shop', 'payments', 'sandbox', 'monitoring', 'quiet'];

export interface RecordedReviewCase {
  /** Stable across runs: source file, document, namespace and variant. */
  id: string;
  review: string;
}

interface SourceObject {
  /** e.g. `examples/deployment.yaml#0` or `realworld:workloads/application/deployment.yaml#0`. */
  source: string;
  object: Record<string, unknown>;
}

function yamlFilesUnder(directory: string): string[] {
  return readdirSync(directory)
    .sort()
    .flatMap((entry) => {
      const full = path.join(directory, entry);
      if (statSync(full).isDirectory()) return yamlFilesUnder(full);
      return /\.ya?ml$/.test(entry) ? [full] : [];
    });
}

function objectsOf(file: string, label: string): SourceObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((document, index) => {
    const object: unknown = document.toJSON();
    if (!isRecord(object) || typeof object.kind !== 'string' || typeof object.apiVersion !== 'string')
      return [];
    // Namespaces and other cluster-scoped kinds never reach the webhook (spec 4.4).
    if (['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(object.kind)) return [];
    return [{ source: `${label}#${index}`, object }];
  });
}

function sourceObjects(): SourceObject[] {
  const examples = [
    'examples/deployment.yaml',
    'examples/compliant-app.yaml',
    'examples/manifests/workloads.yaml',
  ];
  const objects = examples.flatMap((file) => objectsOf(path.join(REPOSITORY_ROOT, file), file));
  const realworld = realworldDirectory();
  if (realworld) {
    const workloads = path.join(realworld, 'workloads');
    for (const file of yamlFilesUnder(workloads))
      objects.push(...objectsOf(file, `realworld:${path.relative(realworld, file)}`));
  }
  return objects;
}

/** What the API server adds to an object it admits: uid, timestamps, managedFields. */
function asAdmitted(object: Record<string, unknown>, namespace: string, sequence: number) {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  return {
    ...object,
    metadata: {
      ...metadata,
      namespace,
      uid: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
      creationTimestamp: '2026-11-27T12:00:00Z',
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: object.apiVersion,
          time: '2026-11-27T12:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } },
        },
      ],
    },
  };
}

/** The previous version of an UPDATE: other labels everywhere, one replica. */
function previousVersion(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(previousVersion);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [
      key,
      key === 'labels' ? { previous: 'yes' } : key === 'replicas' ? 1 : previousVersion(entry),
    ]),
  );
}

function reviewText(
  object: Record<string, unknown>,
  options: { uid: string; namespace: string; operation: 'CREATE' | 'UPDATE'; reviewApiVersion?: string },
): string {
  const apiVersion = object.apiVersion as string;
  const kind = object.kind as string;
  const group = groupOf(apiVersion);
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  const resource = { group, version, resource: pluralOfKind(kind) };
  const name = isRecord(object.metadata) ? object.metadata.name : undefined;
  return JSON.stringify({
    kind: 'AdmissionReview',
    apiVersion: options.reviewApiVersion ?? 'admission.k8s.io/v1',
    request: {
      uid: options.uid,
      kind: { group, version, kind },
      resource,
      requestKind: { group, version, kind },
      requestResource: resource,
      name,
      namespace: options.namespace,
      operation: options.operation,
      userInfo: {
        username: 'developer@example.com',
        uid: 'b1a4e7c2-3f8d-4c55-9a61-0d7e2f4c9b10',
        groups: ['developers', 'system:authenticated'],
      },
      object,
      oldObject: options.operation === 'UPDATE' ? previousVersion(object) : null,
      dryRun: false,
      options: {
        kind: options.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
        apiVersion: 'meta.k8s.io/v1',
      },
    },
  });
}

/** Reviews the webhook must answer allowed without warnings, each for its own reason. */
const MALFORMED: RecordedReviewCase[] = [
  { id: 'malformed:not-json', review: '{"kind": "AdmissionReview", "request": {"uid": "u-1", ' },
  { id: 'malformed:empty', review: '' },
  { id: 'malformed:array', review: '[]' },
  {
    id: 'malformed:no-uid',
    review: '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{}}',
  },
  {
    id: 'malformed:wrong-kind',
    review: '{"kind":"ConfigMap","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-2"}}',
  },
  {
    id: 'malformed:no-namespace',
    review:
      '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u-3","operation":"CREATE","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}}}',
  },
  {
    id: 'malformed:delete-with-old-object',
    review:
      '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-4","namespace":"shop","operation":"DELETE","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"name":"frontend","object":null,"oldObject":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"frontend","namespace":"shop","labels":{"app":"frontend"}},"spec":{"template":{"metadata":{"labels":{"app":"frontend"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}}}',
  },
  {
    id: 'malformed:object-without-kind',
    review:
      '{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-5","namespace":"shop","operation":"CREATE","object":{"metadata":{"name":"x"}}}}',
  },
];

/** Every case, in a stable order. */
export function recordedReviewCases(): RecordedReviewCase[] {
  const cases: RecordedReviewCase[] = [];
  let sequence = 0;
  for (const { source, object } of sourceObjects()) {
    for (const namespace of NAMESPACES) {
      for (const operation of ['CREATE', 'UPDATE'] as const) {
        sequence += 1;
        const admitted = asAdmitted(object, namespace, sequence);
        const uid = `review-${sequence}`;
        cases.push({
          id: `${source}:${namespace}:${operation}`,
          review: reviewText(admitted, { uid, namespace, operation }),
        });
      }
    }
    // A v1beta1 review is answered in v1beta1; more replicas change what the quota has left.
    sequence += 1;
    const admitted = asAdmitted(object, 'shop', sequence);
    cases.push({
      id: `${source}:shop:CREATE:v1beta1`,
      review: reviewText(admitted, {
        uid: `review-${sequence}`,
        namespace: 'shop',
        operation: 'CREATE',
        reviewApiVersion: 'admission.k8s.io/v1beta1',
      }),
    });
    if (isRecord(object.spec) && 'replicas' in object.spec) {
      sequence += 1;
      const scaled = { ...object, spec: { ...object.spec, replicas: 7 } };
      cases.push({
        id: `${source}:shop:CREATE:seven-replicas`,
        review: reviewText(asAdmitted(scaled, 'shop', sequence), {
          uid: `review-${sequence}`,
          namespace: 'shop',
          operation: 'CREATE',
        }),
      });
    }
  }
  return [...cases, ...MALFORMED];
}
