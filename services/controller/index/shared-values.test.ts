import { SharedValues } from './shared-values';
import { ConstraintIndex } from './constraint-index';
import { Ingestor, ParseErrorCounter } from './ingest';
import { AdapterRegistry } from '../adapters/registry';
import { renderText } from '../../model/text';

describe('SharedValues', () => {
  it('returns a deep copy equal to the value', () => {
    const shared = new SharedValues();
    const value = {
      id: 'uid:a#ingress',
      tags: ['network', 'ingress'],
      nested: { list: [{ name: 'policy-0', namespace: 'team-1' }, 'literal', 3, true, null], empty: {} },
      absent: undefined,
    };
    const copy = shared.share(value);
    expect(copy).toStrictEqual(value);
    expect(copy).not.toBe(value);
    expect(Object.keys(copy)).toEqual(Object.keys(value));
  });

  it('gives out one container for equal ones, across calls', () => {
    const shared = new SharedValues();
    const build = (namespace: string) => ({
      resourceTargets: [
        { group: '', resource: 'pods' },
        { group: 'apps', resource: 'deployments' },
      ],
      name: { name: 'policy-0', namespace },
    });
    const first = shared.share(build('team-1'));
    const second = shared.share(build('team-2'));
    const third = shared.share(build('team-1'));
    expect(second.resourceTargets).toBe(first.resourceTargets);
    expect(second.name).not.toBe(first.name);
    expect(third).toBe(first);
  });

  it('keeps containers that differ only in key order, value type or length apart', () => {
    const shared = new SharedValues();
    const values = [{ a: '1', b: '2' }, { b: '2', a: '1' }, { a: 1, b: '2' }, ['x'], ['x', 'x'], { a: '1' }];
    const copies = values.map((value) => shared.share(value));
    expect(new Set(copies).size).toBe(values.length);
    copies.forEach((copy, position) => expect(copy).toStrictEqual(values[position]));
  });

  it('freezes what it gives out, so a writer cannot change another constraint', () => {
    const shared = new SharedValues();
    const copy = shared.share({ tags: ['a'], scope: { kind: 'namespace' } });
    expect(Object.isFrozen(copy.tags)).toBe(true);
    expect(() => (copy.tags as string[]).push('b')).toThrow(TypeError);
    expect(() => {
      (copy.scope as { kind: string }).kind = 'cluster';
    }).toThrow(TypeError);
  });

  it('keeps class instances and functions as they are', () => {
    const shared = new SharedValues();
    const date = new Date(0);
    const check = () => true;
    const copy = shared.share({ date, check, pattern: /a+/ });
    expect(copy.date).toBe(date);
    expect(copy.check).toBe(check);
    expect(copy.pattern.test('aa')).toBe(true);
  });

  it('never sets a prototype from a __proto__ key read off an object', () => {
    const shared = new SharedValues();
    const hostile = JSON.parse(
      '{"__proto__": {"polluted": true}, "spec": {"__proto__": {"x": 1}}}',
    ) as Record<string, unknown>;
    const copy = shared.share(hostile);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'spec']);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('interns strings built by concatenation', () => {
    const shared = new SharedValues();
    const prefix = 'namespace-with-a-long-name';
    const first = shared.share(`${prefix}/${String(1)}`);
    const second = shared.share(`${prefix}/1`);
    expect(first).toBe('namespace-with-a-long-name/1');
    expect(second).toBe(first);
  });

  it('forgets what is no longer given out after two generations, whatever the churn', () => {
    const shared = new SharedValues(100);
    for (let round = 0; round < 5_000; round++) shared.share({ name: `object-${round}`, labels: ['x'] });
    // Two generations of strings and containers at most.
    expect(shared.remembered).toBeLessThanOrEqual(4 * 100);
    // What is still used keeps being shared.
    const kept = shared.share({ labels: ['x'] });
    expect(shared.share({ labels: ['x'] })).toBe(kept);
  });
});

describe('the index with shared values', () => {
  const policy = (namespace: string) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: 'deny-all',
      namespace,
      uid: `uid-${namespace}`,
      managedFields: [{ manager: 'kubectl', operation: 'Update' }],
    },
    spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'] },
  });

  it('answers what views read from trimmed, shared constraints and sources as before', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
    ingestor.upsert(policy('team-1'));
    ingestor.upsert(policy('team-2'));
    const [first] = index.constraintsForNamespace('team-1');
    const [second] = index.constraintsForNamespace('team-2');
    expect(first.source).toEqual({
      kind: 'NetworkPolicy',
      apiVersion: 'networking.k8s.io/v1',
      name: 'deny-all',
      namespace: 'team-1',
    });
    expect(renderText(first.summary, { level: 'full', namespace: 'team-1' })).toContain('deny-all');
    expect(first.ref).toBeDefined();
    expect(index.constraintByReference(first.ref ?? '')).toBe(first);
    // Repeated parts are one object in both namespaces.
    expect(second.resourceTargets).toBe(first.resourceTargets);
    expect(second.tags).toBe(first.tags);
    // The kept source: the spec verdicts read, without managedFields.
    const source = index.findSource('networking.k8s.io', 'NetworkPolicy', 'team-2', 'deny-all');
    expect(source?.spec).toEqual(policy('team-2').spec);
    expect(source?.metadata && 'managedFields' in source.metadata).toBe(false);
    expect(index.sourceOfConstraint(second)).toBe(source);
  });
});

describe('the index keeps a lone constraint of an object without an array', () => {
  it('answers, replaces and removes objects of one and of two constraints alike', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
    const networkPolicy = (name: string, policyTypes: string[]) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name, namespace: 'team-1', uid: `uid-${name}` },
      spec: { podSelector: {}, policyTypes },
    });
    ingestor.upsert(networkPolicy('one', ['Ingress']));
    ingestor.upsert(networkPolicy('two', ['Ingress', 'Egress']));
    expect(index.constraintsOfObject('uid:uid-one')).toHaveLength(1);
    expect(index.constraintsOfObject('uid:uid-two')).toHaveLength(2);
    expect(index.allConstraints()).toHaveLength(3);
    expect(index.totalConstraints()).toBe(3);
    // One becomes two, two becomes one: both forms are replaced and removed whole.
    ingestor.upsert(networkPolicy('one', ['Ingress', 'Egress']));
    ingestor.upsert(networkPolicy('two', ['Egress']));
    expect(index.constraintsOfObject('uid:uid-one').map((constraint) => constraint.id)).toEqual([
      'uid:uid-one#ingress',
      'uid:uid-one#egress',
    ]);
    expect(index.constraintsOfObject('uid:uid-two').map((constraint) => constraint.id)).toEqual([
      'uid:uid-two#egress',
    ]);
    expect(index.constraintsForNamespace('team-1')).toHaveLength(3);
    index.removeObject('uid:uid-two');
    index.removeObject('uid:uid-one');
    expect(index.allConstraints()).toEqual([]);
    expect(index.constraintsForNamespace('team-1')).toEqual([]);
    expect(index.totalConstraints()).toBe(0);
  });
});

describe('kept sources of a kind, tracked from the first request for them', () => {
  it('answers paramsOfKind alike for objects kept before and after the first request', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
    const quota = (name: string, namespace: string) => ({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
      spec: { hard: { pods: '10' } },
    });
    const names = (group: string, kind: string) =>
      index.paramsOfKind(group, kind)?.objects.map((object) => object.metadata?.name) ?? [];
    ingestor.upsert(quota('first', 'team-1'));
    ingestor.upsert(quota('second', 'team-2'));
    ingestor.upsert({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'team-1', uid: 'uid-deny' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    expect(names('', 'ResourceQuota')).toEqual(['first', 'second']);
    expect(index.paramsOfKind('', 'ResourceQuota')?.namespaced).toBe(true);
    // Kept up to date after the first request: added, replaced (moved to the end, as before), removed.
    ingestor.upsert(quota('third', 'team-1'));
    ingestor.upsert({ ...quota('first', 'team-1'), spec: { hard: { pods: '20' } } });
    expect(names('', 'ResourceQuota')).toEqual(['second', 'third', 'first']);
    index.removeObject('uid:uid-team-2-second');
    expect(names('', 'ResourceQuota')).toEqual(['third', 'first']);
    expect(names('networking.k8s.io', 'NetworkPolicy')).toEqual(['deny']);
    expect(index.paramsOfKind('example.com', 'Unknown')).toBeUndefined();
  });
});
