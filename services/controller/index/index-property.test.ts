import fc from 'fast-check';
import { AdapterRegistry } from '../adapters/registry';
import { networkPolicyAdapter } from '../adapters/networkpolicy/networkpolicy';
import { ConstraintIndex } from './constraint-index';
import { Ingestor } from './ingest';
import type { Adapter } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { renderFullText } from '../../model/text';

// Random sequences of upserts and deletes must leave the index exactly as a rebuild from the final
// objects would: no stale constraint survives an update, a delete, a policy losing a rule, or a
// namespace relabel that changes which cluster-wide constraints it admits.

/** A cluster-scoped test kind whose constraints apply to namespaces selected by label. */
const clusterWideAdapter: Adapter = {
  name: 'policyengine',
  kinds: [
    {
      group: 'test.forewarn.io',
      versions: ['v1'],
      kind: 'ClusterRule',
      plural: 'clusterrules',
      namespaced: false,
    },
  ],
  toConstraints: (object) => {
    const name = object.metadata?.name ?? '';
    const team = (object.spec as { team?: string } | undefined)?.team;
    return [
      {
        id: 'rule',
        name,
        displayName: [name],
        type: 'Admission',
        severity: 'Critical',
        effect: 'deny',
        adapter: 'policyengine',
        source: { kind: 'ClusterRule', apiVersion: 'test.forewarn.io/v1', name, namespace: null },
        scope: team ? { kind: 'cluster', namespaceSelector: { matchLabels: { team } } } : { kind: 'cluster' },
        tags: [],
        summary: [name],
        remediationHint: ['fix'],
        remediation: { summary: ['fix'], steps: [] },
      },
    ];
  },
};

const namespaces = ['shop', 'payments', 'monitoring'];
const names = ['a', 'b', 'c'];
const teams = ['red', 'blue'];

const networkPolicy = fc.record({
  kind: fc.constant('NetworkPolicy' as const),
  name: fc.constantFrom(...names),
  namespace: fc.constantFrom(...namespaces),
  policyTypes: fc.subarray(['Ingress', 'Egress']),
  ingressRules: fc.integer({ min: 0, max: 2 }),
  app: fc.option(fc.constantFrom('web', 'api')),
  malformed: fc.boolean(),
});
const clusterRule = fc.record({
  kind: fc.constant('ClusterRule' as const),
  name: fc.constantFrom(...names),
  team: fc.option(fc.constantFrom(...teams)),
});
const namespaceObject = fc.record({
  kind: fc.constant('Namespace' as const),
  name: fc.constantFrom(...namespaces),
  team: fc.constantFrom(...teams),
});
const operation = fc.record({
  remove: fc.boolean(),
  object: fc.oneof(networkPolicy, clusterRule, namespaceObject),
});

type Generated =
  | { kind: 'Namespace'; name: string; team: string }
  | { kind: 'ClusterRule'; name: string; team: string | null }
  | {
      kind: 'NetworkPolicy';
      name: string;
      namespace: string;
      policyTypes: string[];
      ingressRules: number;
      app: string | null;
      malformed: boolean;
    };

function toObject(generated: Generated): KubernetesObject {
  if (generated.kind === 'Namespace')
    return {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: generated.name, labels: { team: generated.team } },
    };
  if (generated.kind === 'ClusterRule')
    return {
      apiVersion: 'test.forewarn.io/v1',
      kind: 'ClusterRule',
      metadata: { name: generated.name },
      spec: generated.team ? { team: generated.team } : {},
    };
  const rule = { from: [{ podSelector: { matchLabels: { app: 'client' } } }] };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: generated.name, namespace: generated.namespace },
    spec: {
      podSelector: generated.malformed
        ? 'not-a-selector'
        : generated.app
          ? { matchLabels: { app: generated.app } }
          : {},
      policyTypes: generated.policyTypes,
      ingress: Array.from({ length: generated.ingressRules }, () => rule),
    },
  };
}

function identity(object: KubernetesObject): string {
  return `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
}

function freshIngestor(): { index: ConstraintIndex; ingestor: Ingestor } {
  const index = new ConstraintIndex();
  const registry = new AdapterRegistry([networkPolicyAdapter, clusterWideAdapter]);
  return { index, ingestor: new Ingestor(index, registry, undefined, undefined, () => new Date(0)) };
}

function snapshot(index: ConstraintIndex): unknown {
  return {
    total: index.totalConstraints(),
    byType: index.countsByType(),
    namespacesWithConstraints: index.namespacesWithConstraints().sort(),
    perNamespace: [...namespaces, 'unlabelled'].map((namespace) =>
      index
        .constraintsForNamespace(namespace)
        .map(
          (constraint) =>
            `${constraint.id} ${constraint.name} ${constraint.effect} ${renderFullText(constraint.summary)}`,
        )
        .sort(),
    ),
  };
}

describe('constraint index', () => {
  it('equals a rebuild from the final objects after any sequence of upserts and deletes', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const incremental = freshIngestor();
        const live = new Map<string, KubernetesObject>();
        for (const { remove, object: generated } of operations) {
          const object = toObject(generated);
          if (remove) {
            incremental.ingestor.delete(object);
            live.delete(identity(object));
          } else {
            incremental.ingestor.upsert(object);
            live.set(identity(object), object);
          }
          // Read between changes so cached per-namespace admissions are exercised.
          incremental.index.constraintsForNamespace(namespaces[operations.length % namespaces.length]);
        }
        const rebuilt = freshIngestor();
        for (const object of live.values()) rebuilt.ingestor.upsert(object);
        expect(snapshot(incremental.index)).toEqual(snapshot(rebuilt.index));
      }),
      { numRuns: 300 },
    );
  });

  it('removes the stale egress constraint when a policy loses its egress direction', () => {
    const { index, ingestor } = freshIngestor();
    const policy = (policyTypes: string[]): KubernetesObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'p', namespace: 'shop' },
      spec: { podSelector: {}, policyTypes },
    });
    ingestor.upsert(policy(['Ingress', 'Egress']));
    expect(
      index
        .constraintsForNamespace('shop')
        .map((constraint) => constraint.name)
        .sort(),
    ).toEqual(['p/egress', 'p/ingress']);
    ingestor.upsert(policy(['Ingress']));
    expect(index.constraintsForNamespace('shop').map((constraint) => constraint.name)).toEqual(['p']);
  });

  it('drops the constraints of an object that becomes malformed and counts the parse error', () => {
    const { index, ingestor } = freshIngestor();
    const good: KubernetesObject = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'p', namespace: 'shop' },
      spec: { podSelector: {} },
    };
    ingestor.upsert(good);
    ingestor.upsert({ ...good, spec: { podSelector: 42 } });
    expect(index.constraintsForNamespace('shop')).toEqual([]);
    expect(ingestor.errors.totalFor('networkpolicy')).toBe(1);
    expect(ingestor.errors.failingFor('networkpolicy')).toBe(1);
    ingestor.upsert(good);
    expect(ingestor.errors.failingFor('networkpolicy')).toBe(0);
    expect(index.constraintsForNamespace('shop')).toHaveLength(1);
  });

  it('re-evaluates cluster-wide admission when a namespace is relabelled', () => {
    const { index, ingestor } = freshIngestor();
    ingestor.upsert(toObject({ kind: 'ClusterRule', name: 'red-only', team: 'red' }));
    ingestor.upsert(toObject({ kind: 'Namespace', name: 'shop', team: 'blue' }));
    expect(index.constraintsForNamespace('shop')).toHaveLength(0);
    ingestor.upsert(toObject({ kind: 'Namespace', name: 'shop', team: 'red' }));
    expect(index.constraintsForNamespace('shop').map((constraint) => constraint.name)).toEqual(['red-only']);
    expect(index.namespacesWithConstraints()).toEqual(['shop']);
  });

  it('applies the forewarn.io annotations over what the adapter said', () => {
    const { index, ingestor } = freshIngestor();
    ingestor.upsert({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: {
        name: 'p',
        namespace: 'shop',
        annotations: {
          'forewarn.io/severity': 'Critical',
          'forewarn.io/summary': 'Only the gateway may call the shop.',
          'forewarn.io/contact': 'shop-oncall@example.com',
        },
      },
      spec: { podSelector: {} },
    });
    const [constraint] = index.constraintsForNamespace('shop');
    expect(constraint.severity).toBe('Critical');
    expect(renderFullText(constraint.summary)).toBe('Only the gateway may call the shop.');
    expect(constraint.remediation.steps.find((step) => step.type === 'manual')?.contact).toBe(
      'shop-oncall@example.com',
    );
  });
});
