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
      resourceVersion: 10,
      listing: 0,
    });
    expect(known.get(undefined, 'cluster-scoped')?.uid).toBe('u3');
    expect(known.get('team-3', 'web-1')).toBeUndefined();
    // Replacing an entry does not count it twice.
    known.set(pod('team-1', 'web-1', 'u1', '13'));
    expect(known.size).toBe(3);
    expect(known.get('team-1', 'web-1')?.resourceVersion).toBe(13);
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

  it("keeps a namespace's lone object and its several objects alike, through growth and shrinkage", () => {
    const known = new KnownObjects();
    known.set(pod('team-1', 'web-1', 'u1', '1'));
    // Another name in the same namespace: both are found.
    known.set(pod('team-1', 'web-2', 'u2', '1'));
    expect(known.size).toBe(2);
    expect(known.get('team-1', 'web-1')?.uid).toBe('u1');
    expect(known.get('team-1', 'web-2')?.uid).toBe('u2');
    // Back to one: the other is still found, an unknown name is not, and the count follows.
    expect(known.delete('team-1', 'web-1')).toBe(true);
    expect(known.get('team-1', 'web-1')).toBeUndefined();
    expect(known.get('team-1', 'web-2')?.uid).toBe('u2');
    expect(known.delete('team-1', 'web-9')).toBe(false);
    expect(known.size).toBe(1);
    // Replacing the lone object does not count it twice.
    known.set(pod('team-1', 'web-2', 'u2', '2'));
    expect(known.size).toBe(1);
    expect(known.get('team-1', 'web-2')?.resourceVersion).toBe(2);
    // Growing again to three, then listing what a relist did not see.
    known.set(pod('team-1', 'web-3', 'u3', '1'));
    known.set(pod('team-1', 'web-4', 'u4', '1'));
    known.markListing();
    known.set(pod('team-1', 'web-3', 'u3', '2'));
    expect(
      known
        .notSeenInListing()
        .map((entry) => entry.name)
        .sort(),
    ).toEqual(['web-2', 'web-4']);
    expect(known.size).toBe(3);
    expect(known.delete('team-1', 'web-2')).toBe(true);
    expect(known.delete('team-1', 'web-3')).toBe(true);
    expect(known.delete('team-1', 'web-4')).toBe(true);
    expect(known.size).toBe(0);
    expect(known.all()).toEqual([]);
  });

  it('finds every object of a namespace as it grows past a few and shrinks back', () => {
    const known = new KnownObjects();
    const names = Array.from({ length: 40 }, (_, position) => `web-${position}`);
    names.forEach((name, position) => {
      known.set(pod('team-1', name, `u${position}`, '1'));
      expect(known.size).toBe(position + 1);
      for (const earlier of names.slice(0, position + 1))
        expect(known.get('team-1', earlier)?.name).toBe(earlier);
    });
    known.set(pod('team-1', 'web-7', 'u7', '2'));
    expect(known.size).toBe(40);
    expect(known.get('team-1', 'web-7')?.resourceVersion).toBe(2);
    names.forEach((name, position) => {
      expect(known.delete('team-1', name)).toBe(true);
      expect(known.delete('team-1', name)).toBe(false);
      expect(known.size).toBe(names.length - position - 1);
      expect(known.get('team-1', name)).toBeUndefined();
      expect(
        known
          .all()
          .map((entry) => entry.name)
          .sort(),
      ).toEqual(names.slice(position + 1).sort());
    });
  });

  it('tells an unchanged resend by its resourceVersion, decimal or opaque, and never an empty one', () => {
    const known = new KnownObjects();
    known.set(pod('team-1', 'decimal', 'u1', '4021'));
    known.set(pod('team-1', 'opaque', 'u2', 'v7-abc'));
    known.set(pod('team-1', 'zero-led', 'u3', '0042'));
    known.set(pod('team-1', 'none', 'u4', ''));
    const entry = (name: string) => {
      const found = known.get('team-1', name);
      if (!found) throw new Error(`${name} is known`);
      return found;
    };
    expect(known.isCurrent(entry('decimal'), '4021')).toBe(true);
    expect(known.isCurrent(entry('decimal'), '4022')).toBe(false);
    expect(known.isCurrent(entry('decimal'), '04021')).toBe(false);
    expect(known.isCurrent(entry('opaque'), 'v7-abc')).toBe(true);
    expect(known.isCurrent(entry('opaque'), 'v7-abd')).toBe(false);
    expect(known.isCurrent(entry('zero-led'), '0042')).toBe(true);
    expect(known.isCurrent(entry('zero-led'), '42')).toBe(false);
    expect(known.isCurrent(entry('none'), '')).toBe(false);
    // Beyond what a double holds exactly: kept as given, still compared exactly.
    known.set(pod('team-1', 'long', 'u5', '12345678901234567890'));
    expect(known.isCurrent(entry('long'), '12345678901234567890')).toBe(true);
    expect(known.isCurrent(entry('long'), '12345678901234567891')).toBe(false);
  });
});
