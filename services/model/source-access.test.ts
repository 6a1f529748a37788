import { readAccessKey, sourceReadAccess } from './source-access';

describe('sourceReadAccess: the get a caller needs to read a constraint unredacted', () => {
  it('names the plural and scope the controller watches the kind with', () => {
    expect(
      sourceReadAccess({ kind: 'Policy', apiVersion: 'kyverno.io/v1', name: 'team', namespace: 'shop' }),
    ).toEqual({ group: 'kyverno.io', resource: 'policies', namespace: 'shop', name: 'team' });
    expect(
      sourceReadAccess({ kind: 'ClusterPolicy', apiVersion: 'kyverno.io/v1', name: 'team', namespace: null }),
    ).toEqual({ group: 'kyverno.io', resource: 'clusterpolicies', namespace: null, name: 'team' });
    expect(
      sourceReadAccess({ kind: 'ResourceQuota', apiVersion: 'v1', name: 'compute', namespace: 'shop' }),
    ).toEqual({ group: '', resource: 'resourcequotas', namespace: 'shop', name: 'compute' });
  });

  it('reads Gatekeeper constraints under their lower-cased kind, cluster-wide', () => {
    expect(
      sourceReadAccess({
        kind: 'K8sRequiredLabels',
        apiVersion: 'constraints.gatekeeper.sh/v1beta1',
        name: 'must-have-team',
        namespace: null,
      }),
    ).toEqual({
      group: 'constraints.gatekeeper.sh',
      resource: 'k8srequiredlabels',
      namespace: null,
      name: 'must-have-team',
    });
  });

  it('asks nothing for a kind the controller does not watch (no elevation, fail-closed)', () => {
    expect(
      sourceReadAccess({ kind: 'Widget', apiVersion: 'example.com/v1', name: 'w', namespace: 'shop' }),
    ).toBeUndefined();
  });

  it('keys objects apart by group, resource, namespace and name', () => {
    const key = (namespace: string | null) =>
      readAccessKey({ group: 'kyverno.io', resource: 'policies', namespace, name: 'a' });
    expect(key('shop')).not.toBe(key('other'));
    expect(key(null)).not.toBe(key('shop'));
  });
});
