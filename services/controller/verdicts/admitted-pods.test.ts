import type { KubernetesObject } from '../../model/kubernetes';
import { readLimitRangeItems } from './admitted-pods';
import { NO_RESOURCES } from './pod-resources';
import { MAX_KEPT } from './verdict-index';

// A LimitRange's parsed items live as long as the LimitRange (one parse per revision), at cluster
// scale thousands of them (issue 33: heap per constraint): a bound the item leaves unset is the one
// shared empty map, not a table of its own.

function limitRange(name: string, limits: unknown[]): KubernetesObject {
  return { apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace: 'shop' }, spec: { limits } };
}

describe('readLimitRangeItems', () => {
  it('shares one empty map for every unset bound, and keeps the defaulting', () => {
    const [first] = readLimitRangeItems(
      limitRange('defaults', [{ type: 'Container', default: { cpu: '500m', memory: '512Mi' } }]),
    );
    const [second] = readLimitRangeItems(limitRange('other', [{ type: 'Container', max: { cpu: '2' } }]));
    expect(first.min).toBe(NO_RESOURCES);
    expect(first.max).toBe(NO_RESOURCES);
    expect(first.maxLimitRequestRatio).toBe(NO_RESOURCES);
    expect(second.min).toBe(NO_RESOURCES);
    // default ← max, defaultRequest ← default, as the API server defaults them.
    expect([...first.defaultRequest.keys()]).toEqual(['cpu', 'memory']);
    // The same entries: one map for both.
    expect(first.defaultRequest).toBe(first.default);
    expect([...second.default.keys()]).toEqual(['cpu']);
    expect([...second.defaultRequest.keys()]).toEqual(['cpu']);
    const [own] = readLimitRangeItems(
      limitRange('requests', [{ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '250m' } }]),
    );
    expect(own.defaultRequest).not.toBe(own.default);
    expect(own.defaultRequest.get('cpu')).not.toEqual(own.default.get('cpu'));
    expect(NO_RESOURCES.size).toBe(0);
  });

  it('parses once per LimitRange object', () => {
    const object = limitRange('defaults', [{ type: 'Pod', max: { cpu: '4' } }]);
    expect(readLimitRangeItems(object)).toBe(readLimitRangeItems(object));
    expect(readLimitRangeItems(object)[0].default).toBe(NO_RESOURCES);
  });
});

describe("the verdicts' view of the index", () => {
  it('keeps at most 1,000 lists and sources per index revision', () => {
    // A sweep of every workload reads every namespace's lists through it; at 10,000 the view held
    // ~1.8 MiB at cluster scale until the next index change.
    expect(MAX_KEPT).toBeLessThanOrEqual(1_000);
  });
});
