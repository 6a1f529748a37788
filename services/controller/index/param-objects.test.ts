import { AdapterRegistry } from '../adapters/registry';
import { ConstraintIndex } from './constraint-index';
import { Ingestor } from './ingest';

// Offline (`forewarn check --manifests DIR`, issue 31): every kind in DIR can be a
// ValidatingAdmissionPolicy param, without --param-kinds; on a cluster only configured kinds are kept.

const limit = (namespace: string) => ({
  apiVersion: 'rules.example.com/v1',
  kind: 'ReplicaLimit',
  metadata: { name: 'limit', namespace },
  maxReplicas: 3,
});

describe('param objects of every kind (offline)', () => {
  it('keeps a kind present only as objects (no CRD), with its scope read off them', () => {
    const index = new ConstraintIndex({ paramsOfEveryKind: true });
    new Ingestor(index, new AdapterRegistry()).upsert(limit('team'));
    expect(index.paramsOfKind('rules.example.com', 'ReplicaLimit')).toEqual({
      namespaced: true,
      objects: [limit('team')],
    });
  });

  it('keeps ConfigMaps too offline, and knows nothing of a kind DIR does not hold', () => {
    const index = new ConstraintIndex({ paramsOfEveryKind: true });
    const settings = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits', namespace: 'team' } };
    new Ingestor(index, new AdapterRegistry()).upsert(settings);
    expect(index.paramsOfKind('', 'ConfigMap')?.objects).toEqual([settings]);
    expect(index.paramsOfKind('rules.example.com', 'ReplicaLimit')).toBeUndefined();
  });

  it('keeps nothing of an unconfigured kind on a cluster', () => {
    const index = new ConstraintIndex();
    new Ingestor(index, new AdapterRegistry()).upsert(limit('team'));
    expect(index.paramsOfKind('rules.example.com', 'ReplicaLimit')).toBeUndefined();
  });
});

describe('a param kind defined and removed', () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'replicalimits.rules.example.com' },
    spec: {
      group: 'rules.example.com',
      names: { kind: 'ReplicaLimit', plural: 'replicalimits' },
      scope: 'Namespaced',
    },
  };

  it('advances the index revision both ways, so no remembered answer outlives the kind', () => {
    const index = new ConstraintIndex({ paramsOfEveryKind: true });
    const before = index.revision;
    index.defineParamKind(crd, false);
    const defined = index.revision;
    expect(defined).toBeGreaterThan(before);
    index.defineParamKind(crd, true);
    expect(index.revision).toBeGreaterThan(defined);
    // Removing it again changes nothing.
    const removed = index.revision;
    index.defineParamKind(crd, true);
    expect(index.revision).toBe(removed);
  });
});
