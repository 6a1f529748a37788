import { ConstraintIndex } from '../index/constraint-index';
import type { ConstraintDraft } from '../../model/constraint';
import {
  MAX_NAMESPACE_TARGETS,
  buildConstraintList,
  matchingConstraints,
  namespaceTargetsKept,
} from './constraint-list';
import { buildNamespaceReport } from './report';
import { RevisionCache } from './revision-cache';
import { FIXED_NOW, indexObjects } from '../../../test/support/controller-fixtures';

// The per-revision view cache: shared while the index is unchanged, rebuilt as soon as it changes,
// bounded, and frozen so no caller can alter what the next caller gets.

function networkPolicy(name: string, namespace = 'shop') {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace },
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  };
}

describe('RevisionCache', () => {
  it('builds once per key while the revision stays, again after any change', () => {
    const index = new ConstraintIndex();
    const cache = new RevisionCache<string[]>();
    let builds = 0;
    const build = () => [`build ${++builds}`];
    expect(cache.get(index, 'a', build)).toEqual(['build 1']);
    expect(cache.get(index, 'a', build)).toEqual(['build 1']);
    expect(cache.get(index, 'b', build)).toEqual(['build 2']);
    index.setNamespace('shop', {});
    expect(cache.get(index, 'a', build)).toEqual(['build 3']);
  });

  it('keeps at most its limit of keys, dropping the oldest', () => {
    const index = new ConstraintIndex();
    const cache = new RevisionCache<{ key: string }>(2);
    let builds = 0;
    const build = (key: string) => () => {
      builds++;
      return { key };
    };
    cache.get(index, 'a', build('a'));
    cache.get(index, 'b', build('b'));
    cache.get(index, 'c', build('c'));
    cache.get(index, 'b', build('b'));
    expect(builds).toBe(3);
    cache.get(index, 'a', build('a'));
    expect(builds).toBe(4);
  });

  it('hands out frozen values, deeply', () => {
    const cache = new RevisionCache<{ nested: { list: number[] } }>();
    const value = cache.get(new ConstraintIndex(), 'a', () => ({ nested: { list: [1] } }));
    expect(() => value.nested.list.push(2)).toThrow(TypeError);
    expect(Object.isFrozen(value.nested)).toBe(true);
  });
});

describe('cached views follow the index', () => {
  it('report and list show a change made after they were cached', () => {
    const cluster = indexObjects([networkPolicy('first')]);
    const names = () =>
      buildNamespaceReport(cluster.index, 'shop', 'full', FIXED_NOW).constraints.map((entry) => entry.name);
    const listed = () =>
      buildConstraintList(cluster.index, { namespace: 'shop' }).constraints.map((entry) => entry.name);
    expect(names()).toEqual(['first']);
    expect(listed()).toEqual(['first']);
    cluster.ingestor.upsert(networkPolicy('second'));
    expect(names()).toEqual(['first', 'second']);
    expect(listed()).toEqual(['first', 'second']);
    cluster.ingestor.delete(networkPolicy('first'));
    expect(names()).toEqual(['second']);
    expect(listed()).toEqual(['second']);
  });

  it('keeps different queries and levels apart', () => {
    const cluster = indexObjects([
      networkPolicy('shop-policy'),
      networkPolicy('other-policy', 'payments'),
      {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'compute', namespace: 'shop' },
        spec: { hard: { pods: '10' } },
        status: { hard: { pods: '10' }, used: { pods: '9' } },
      },
    ]);
    const listed = (resource?: { group: string; resource: string }) =>
      buildConstraintList(cluster.index, { namespace: 'shop', resource }).constraints.map(
        (entry) => entry.name,
      );
    expect(listed()).toEqual(['compute', 'shop-policy']);
    expect(listed({ group: 'networking.k8s.io', resource: 'ingresses' })).not.toEqual(listed());
    expect(
      buildConstraintList(cluster.index, { namespace: 'payments' }).constraints.map((entry) => entry.name),
    ).toEqual(['other-policy']);
    const summary = buildNamespaceReport(cluster.index, 'shop', 'summary', FIXED_NOW);
    const full = buildNamespaceReport(cluster.index, 'shop', 'full', FIXED_NOW);
    expect(summary.detailLevel).toBe('summary');
    expect(JSON.stringify(summary.constraints)).not.toEqual(JSON.stringify(full.constraints));
  });
});

describe('what a check in every namespace leaves kept (issue 33: heap per constraint)', () => {
  // The workloads at risk check every workload through the admission check's path; what that keeps
  // lives until the index changes, so it is bounded by what admission checks reuse, not by namespaces.
  it('keeps at most MAX_NAMESPACE_TARGETS namespaces, each still answered right', () => {
    const count = MAX_NAMESPACE_TARGETS + 50;
    const namespaces = Array.from({ length: count }, (_, at) => `team-${at}`);
    const cluster = indexObjects(
      namespaces.map((namespace) => networkPolicy(`policy-${namespace}`, namespace)),
    );
    const names = (namespace: string) =>
      matchingConstraints(cluster.index, { namespace }, []).map((constraint) => constraint.name);
    for (const namespace of namespaces) expect(names(namespace)).toEqual([`policy-${namespace}`]);
    expect(namespaceTargetsKept(cluster.index)).toBe(MAX_NAMESPACE_TARGETS);
    // At 1,000 these (with each namespace's constraint names) held ~0.6 MiB at cluster scale.
    expect(MAX_NAMESPACE_TARGETS).toBeLessThanOrEqual(256);
    // The oldest were let go, and are built again when asked.
    expect(names('team-0')).toEqual(['policy-team-0']);
    cluster.ingestor.upsert(networkPolicy('another', 'team-1'));
    expect(namespaceTargetsKept(cluster.index)).toBe(0);
  });

  it('adds a companion finding only when the index has no constraint of its name', () => {
    const cluster = indexObjects([networkPolicy('default-deny')]);
    const indexed = cluster.index.constraintsForNamespace('shop')[0];
    const finding = { ...indexed, name: 'missing-issuer' };
    const names = (prospective: ConstraintDraft[]) =>
      matchingConstraints(cluster.index, { namespace: 'shop' }, prospective).map(({ name }) => name);
    expect(names([finding])).toEqual(['default-deny', 'missing-issuer']);
    expect(names([{ ...indexed }])).toEqual(['default-deny']);
  });
});
