import { KnownObjects } from './known-objects';

const pod = (namespace: string | undefined, name: string, uid: string, resourceVersion: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid, resourceVersion, labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'web:1' }] },
});

describe('KnownObjects', () => {
  it('remembers identity and resourceVersion only, by namespace and name', () => {
    const known = new KnownObjects();
    known.set(pod('team-1', 'web-1', 'u1', '10'));
    known.set(pod('team-2', 'web-1', 'u2', '11'));
    known.set(pod(undefined, 'cluster-scoped', 'u3', '12'));
    expect(known.size).toBe(3);
    expect(known.get('team-1', 'web-1')).toEqual({
      name: 'web-1',
      namespace: 'team-1',
      uid: 'u1',
      resourceVersion: '10',
      listing: 0,
    });
    expect(known.get(undefined, 'cluster-scoped')?.uid).toBe('u3');
    expect(known.get('team-3', 'web-1')).toBeUndefined();
    // Replacing an entry does not count it twice.
    known.set(pod('team-1', 'web-1', 'u1', '13'));
    expect(known.size).toBe(3);
    expect(known.get('team-1', 'web-1')?.resourceVersion).toBe('13');
  });

  it('returns, after a relist, what the relist neither touched nor set', () => {
    const known = new KnownObjects();
    known.set(pod('team-1', 'kept', 'u1', '1'));
    known.set(pod('team-1', 'changed', 'u2', '1'));
    known.set(pod('team-1', 'gone', 'u3', '1'));
    known.set(pod('team-2', 'gone-too', 'u4', '1'));
    known.markListing();
    const kept = known.get('team-1', 'kept');
    if (!kept) throw new Error('kept is known');
    known.touch(kept);
    known.set(pod('team-1', 'changed', 'u2', '2'));
    expect(
      known
        .notSeenInListing()
        .map((entry) => `${entry.namespace}/${entry.name}`)
        .sort(),
    ).toEqual(['team-1/gone', 'team-2/gone-too']);
  });

  it('deletes, drops empty namespaces and clears', () => {
    const known = new KnownObjects();
    known.set(pod('team-1', 'web-1', 'u1', '1'));
    known.set(pod('team-1', 'web-2', 'u2', '1'));
    expect(known.delete('team-1', 'web-1')).toBe(true);
    expect(known.delete('team-1', 'web-1')).toBe(false);
    expect(known.all().map((entry) => entry.name)).toEqual(['web-2']);
    known.delete('team-1', 'web-2');
    expect(known.size).toBe(0);
    expect(known.all()).toEqual([]);
    known.set(pod('team-1', 'web-3', 'u3', '1'));
    known.clear();
    expect(known.size).toBe(0);
    expect(known.get('team-1', 'web-3')).toBeUndefined();
  });
});
