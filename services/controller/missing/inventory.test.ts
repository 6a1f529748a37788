import type { KubernetesObject } from '../../model/kubernetes';
import { Inventory } from './inventory';

// The inventory answers by kind, by kind in one namespace, and by name; records of other namespaces
// and kinds never show up, and a removed object is gone from every answer.

const service = (namespace: string, name: string, app = name): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { selector: { app } },
});
const issuer = (name: string): KubernetesObject => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'ClusterIssuer',
  metadata: { name },
  spec: {},
});
const names = (records: Array<{ namespace: string | null; name: string }>) =>
  records.map((record) => `${record.namespace ?? '-'}/${record.name}`);

describe('Inventory', () => {
  test('records of one namespace, of every namespace, and cluster-scoped ones', () => {
    const inventory = new Inventory();
    for (const object of [
      service('a', 'web'),
      service('b', 'web'),
      service('a', 'api'),
      issuer('letsencrypt'),
      service('c', 'db'),
    ])
      inventory.upsert(object);
    expect(names(inventory.records('', 'Service', 'a'))).toEqual(['a/web', 'a/api']);
    expect(names(inventory.records('', 'Service', 'b'))).toEqual(['b/web']);
    expect(inventory.records('', 'Service', 'missing')).toEqual([]);
    expect(inventory.records('', 'Service', null)).toEqual([]);
    // Across namespaces no caller relies on an order (they ask whether some record matches).
    expect(names(inventory.records('', 'Service')).sort()).toEqual(['a/api', 'a/web', 'b/web', 'c/db']);
    expect(names(inventory.records('cert-manager.io', 'ClusterIssuer', null))).toEqual(['-/letsencrypt']);
    expect(names(inventory.records('cert-manager.io', 'ClusterIssuer'))).toEqual(['-/letsencrypt']);
    expect(inventory.records('cert-manager.io', 'ClusterIssuer', 'a')).toEqual([]);
  });

  test('one record by name, in its namespace only', () => {
    const inventory = new Inventory();
    inventory.upsert(service('a', 'web'));
    inventory.upsert(issuer('letsencrypt'));
    expect(inventory.record('', 'Service', 'a', 'web')).toMatchObject({ namespace: 'a', name: 'web' });
    expect(inventory.record('', 'Service', 'b', 'web')).toBeUndefined();
    expect(inventory.record('', 'Service', null, 'web')).toBeUndefined();
    expect(inventory.record('', 'Pod', 'a', 'web')).toBeUndefined();
    expect(inventory.record('cert-manager.io', 'ClusterIssuer', null, 'letsencrypt')).toMatchObject({
      name: 'letsencrypt',
    });
    expect(inventory.record('cert-manager.io', 'ClusterIssuer', 'a', 'letsencrypt')).toBeUndefined();
  });

  test('an update replaces the record and moves it last in its namespace; a removal is gone everywhere', () => {
    const inventory = new Inventory();
    inventory.upsert(service('a', 'web'));
    inventory.upsert(service('a', 'api'));
    inventory.upsert(service('a', 'web', 'frontend'));
    expect(names(inventory.records('', 'Service', 'a'))).toEqual(['a/api', 'a/web']);
    expect(inventory.record('', 'Service', 'a', 'web')?.serviceSelector).toEqual({ app: 'frontend' });
    inventory.remove(service('a', 'api'));
    inventory.remove(service('a', 'web'));
    expect(inventory.records('', 'Service', 'a')).toEqual([]);
    expect(inventory.records('', 'Service')).toEqual([]);
    expect(inventory.record('', 'Service', 'a', 'web')).toBeUndefined();
  });

  test('a namespace keeps its order through growing past one record and shrinking back', () => {
    const inventory = new Inventory();
    for (const name of ['a', 'b', 'c']) inventory.upsert(service('n', name));
    inventory.upsert(service('m', 'other'));
    inventory.remove(service('n', 'b'));
    expect(names(inventory.records('', 'Service', 'n'))).toEqual(['n/a', 'n/c']);
    inventory.remove(service('n', 'a'));
    expect(names(inventory.records('', 'Service', 'n'))).toEqual(['n/c']);
    expect(inventory.record('', 'Service', 'n', 'a')).toBeUndefined();
    expect(inventory.record('', 'Service', 'n', 'c')).toMatchObject({ name: 'c' });
    // Removing another name where one record is left keeps that record.
    inventory.remove(service('n', 'b'));
    inventory.upsert(service('n', 'a'));
    inventory.upsert(service('n', 'c', 'changed'));
    expect(names(inventory.records('', 'Service', 'n'))).toEqual(['n/a', 'n/c']);
    expect(inventory.record('', 'Service', 'n', 'c')?.serviceSelector).toEqual({ app: 'changed' });
    expect(names(inventory.records('', 'Service')).sort()).toEqual(['m/other', 'n/a', 'n/c']);
  });

  test('a kind without a CRD is known while objects of it are, and no longer once they are gone', () => {
    const inventory = new Inventory();
    const monitor = (namespace: string): KubernetesObject => ({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: { name: 'm', namespace },
      spec: {},
    });
    inventory.upsert(monitor('a'));
    inventory.upsert(monitor('b'));
    inventory.remove(monitor('a'));
    expect(inventory.hasKind('monitoring.coreos.com', 'PodMonitor')).toBe(true);
    inventory.remove(monitor('b'));
    expect(inventory.hasKind('monitoring.coreos.com', 'PodMonitor')).toBe(false);
    // Removing what is not there changes nothing.
    inventory.remove(monitor('c'));
    expect(inventory.records('monitoring.coreos.com', 'PodMonitor')).toEqual([]);
  });
});
