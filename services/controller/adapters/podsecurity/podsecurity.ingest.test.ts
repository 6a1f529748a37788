import type { KubernetesObject } from '../../../model/kubernetes';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { candidatesOf, INVENTORY_CANDIDATES } from '../../sources/cluster/discovery';
import { AdapterRegistry } from '../registry';

// Namespaces are both inventory (labels for selectors) and a policy source (Pod Security labels):
// one watch, one object, both uses.

const namespace = (labels: Record<string, string>): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'shop', uid: 'ns-shop', labels },
});

describe('Pod Security Admission through the ingest layer', () => {
  it('follows label changes and deletion of the Namespace, keeping its labels for selectors', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry());
    const names = () => index.constraintsForNamespace('shop').map((constraint) => constraint.name);

    expect(
      ingestor.upsert(namespace({ 'pod-security.kubernetes.io/enforce': 'restricted', env: 'prod' })),
    ).toBe('podsecurity');
    expect(names()).toEqual(['pod-security/enforce']);
    expect(index.labelsOfNamespace('shop')).toMatchObject({ env: 'prod' });

    ingestor.upsert(namespace({ 'pod-security.kubernetes.io/warn': 'baseline', env: 'prod' }));
    expect(names()).toEqual(['pod-security/warn']);

    ingestor.delete(namespace({}));
    expect(names()).toEqual([]);
    expect(index.allConstraints()).toEqual([]);
  });

  it('uses the cluster default from the ingest settings', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry(), undefined, {
      defaultContact: 'platform-team@example.com',
      ownWebhookName: 'forewarn-webhook',
      meshRootNamespace: 'istio-system',
      podSecurityDefaults: { enforce: { level: 'baseline', version: 'latest' } },
    });
    ingestor.upsert(namespace({ team: 'storefront' }));
    expect(index.constraintsForNamespace('shop').map((constraint) => constraint.tags)).toEqual([
      ['pod-security', 'enforce', 'baseline', 'latest', 'cluster-default'],
    ]);
  });

  it('watches Namespaces once, owned by the podsecurity adapter', () => {
    const namespaceCandidates = candidatesOf(new AdapterRegistry(), INVENTORY_CANDIDATES).filter(
      (candidate) => candidate.group === '' && candidate.kind === 'Namespace',
    );
    expect(namespaceCandidates).toEqual([
      { group: '', versions: ['v1'], kind: 'Namespace', owner: 'podsecurity' },
    ]);
  });
});
