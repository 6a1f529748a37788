import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';

// Objects from files or a broken API may carry anything in their identity fields. A name, namespace or
// uid that is an object which cannot become a string (no prototype, or a `toString` that is not a
// function) once threw "Cannot convert object to primitive value" while the Ingestor built a key
// (found by test/reliability/fuzz-kubernetes-objects.test.ts). Every path must read them as absent.

const unprintable = (): unknown => Object.create(null) as unknown;
const brokenToString = (): unknown => ({ toString: 1 });

function withIdentity(base: KubernetesObject, metadata: Record<string, unknown>): KubernetesObject {
  return { ...base, metadata: metadata as KubernetesObject['metadata'] };
}

const BASES: KubernetesObject[] = [
  // A retained kind (kept for its bindings), a plain policy kind, a workload and a Namespace.
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    spec: { validations: [{ expression: 'true' }] },
  },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', spec: { podSelector: {} } },
  { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { metadata: { labels: { app: 'a' } } } } },
  { apiVersion: 'v1', kind: 'Namespace' },
];

describe('Ingestor with objects whose identity fields are not strings', () => {
  it.each(BASES.map((base) => [base.kind, base] as const))(
    'adds and deletes a %s without throwing, and leaves no constraint behind',
    (_kind, base) => {
      const cluster = indexObjects([]);
      const hostile = [
        withIdentity(base, { name: unprintable(), namespace: 'shop' }),
        withIdentity(base, { name: 'policy', namespace: brokenToString() }),
        withIdentity(base, { name: 'policy', namespace: 'shop', uid: unprintable() }),
      ];
      for (const object of hostile) expect(() => cluster.ingestor.upsert(object)).not.toThrow();
      for (const object of hostile) expect(() => cluster.ingestor.delete(object)).not.toThrow();
      expect(cluster.index.allConstraints()).toEqual([]);
    },
  );
});
