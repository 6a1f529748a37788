import type { KubernetesObject } from '../../model/kubernetes';
import { KeptWorkloads } from './kept-workloads';
import { keepWorkload } from './workload-risk';

const deployment = (namespace: string, name: string, image = 'nginx:1.27') =>
  keepWorkload({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { template: { spec: { containers: [{ name: 'web', image }] } } },
  });

const keysOf = (kept: KeptWorkloads, namespace: string) => [...kept.keysIn(namespace)].sort();

describe('the kept workloads of the risk tracker', () => {
  it('keeps each workload as given, by key and by namespace, through adds, replaces and deletes', () => {
    const kept = new KeptWorkloads();
    const web = deployment('shop', 'web');
    kept.set(web);
    expect(kept.get(web.key)).toEqual(web);
    expect(keysOf(kept, 'shop')).toEqual([web.key]);
    const api = deployment('shop', 'api');
    const other = deployment('billing', 'web');
    kept.set(api);
    kept.set(other);
    expect(kept.size).toBe(3);
    expect(keysOf(kept, 'shop')).toEqual([api.key, web.key].sort());
    expect(new Map([...kept.namespaces()].map(([namespace, keys]) => [namespace, [...keys].sort()]))).toEqual(
      new Map([
        ['shop', [api.key, web.key].sort()],
        ['billing', [other.key]],
      ]),
    );
    // A replacement of the same key: one workload still, its new JSON kept.
    const changed = deployment('shop', 'web', 'nginx:1.28');
    kept.set(changed);
    expect(kept.size).toBe(3);
    expect(kept.get(web.key)).toEqual(changed);
    expect(keysOf(kept, 'shop')).toEqual([api.key, web.key].sort());
    // Deletes: what was kept comes back once; a namespace emptied holds nothing.
    expect(kept.delete(api.key)).toEqual(api);
    expect(kept.delete(api.key)).toBeUndefined();
    expect(keysOf(kept, 'shop')).toEqual([web.key]);
    expect(kept.delete(web.key)).toEqual(changed);
    expect(keysOf(kept, 'shop')).toEqual([]);
    expect([...kept.namespaces()].map(([namespace]) => namespace)).toEqual(['billing']);
    expect([...kept.keys()]).toEqual([other.key]);
    expect(kept.has(other.key)).toBe(true);
    expect(kept.has(web.key)).toBe(false);
  });

  it('keeps the owner of an owned workload', () => {
    const kept = new KeptWorkloads();
    const owned = keepWorkload({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'web',
        namespace: 'shop',
        ownerReferences: [{ kind: 'Rollout', name: 'web', controller: true }],
      },
      spec: {},
    } as KubernetesObject);
    kept.set(owned);
    expect(kept.get(owned.key)?.identity.owner).toEqual({ kind: 'Rollout', name: 'web' });
  });

  it('finds every workload of a namespace as it grows past a few and shrinks back', () => {
    const kept = new KeptWorkloads();
    const workloads = Array.from({ length: 40 }, (_, position) => deployment('shop', `web-${position}`));
    workloads.forEach((workload, position) => {
      kept.set(workload);
      expect(keysOf(kept, 'shop')).toEqual(
        workloads
          .slice(0, position + 1)
          .map((each) => each.key)
          .sort(),
      );
    });
    workloads.forEach((workload, position) => {
      expect(kept.delete(workload.key)).toEqual(workload);
      expect(keysOf(kept, 'shop')).toEqual(
        workloads
          .slice(position + 1)
          .map((each) => each.key)
          .sort(),
      );
    });
    expect(kept.size).toBe(0);
  });
});
