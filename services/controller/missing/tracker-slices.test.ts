import path from 'node:path';
import { ConstraintIndex } from '../index/constraint-index';
import { AdapterRegistry } from '../adapters/registry';
import { Ingestor } from '../index/ingest';
import type { KubernetesObject } from '../../model/kubernetes';
import { fixture, loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { MissingResourceTracker } from './tracker';

// The controller's evaluation of missing companions after a change (issue 35's admission p99 during a
// policy change): worked out in slices, written in one step, so that a reader sees the previous
// findings until the new ones are complete, and a change during one is evaluated after it.

const objects = loadFixtureObjects(path.join(__dirname, 'fixtures/companions.yaml'));
const storefront = fixture(objects, 'storefront');
const issuer = fixture(objects, 'letsencrypt-prod');
const crds = ['clusterissuers.cert-manager.io'].map((name) => fixture(objects, name));

const WORKLOADS = 200;

/** `count` copies of the storefront Deployment (each needs the ClusterIssuer), in namespace shop. */
function storefronts(count: number): KubernetesObject[] {
  return Array.from({ length: count }, (_, position) => ({
    ...storefront,
    metadata: { ...storefront.metadata, name: `storefront-${position}` },
  }));
}

/**
 * A tracker evaluating in the background, whose clock moves 1 ms per look: a slice of 1 ms is one
 * check, 32 workloads. `atLook` runs at the given look at the clock (during an evaluation, between
 * two of its slices' checks), as a reader or a watch event would come in between slices.
 */
function slicedTracker(atLook: Record<number, () => void> = {}) {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry());
  let looks = 0;
  const tracker = new MissingResourceTracker(
    index,
    {
      debounceMs: 0,
      disabledRules: new Set(['mesh-mtls', 'monitoring']),
      meshRootNamespace: 'istio-system',
      defaultContact: 'platform@example.com',
      canSee: () => true,
      evaluationDelayMs: 0,
      sliceBudgetMs: 1,
    },
    undefined,
    () => {
      looks++;
      atLook[looks]?.();
      return looks;
    },
  );
  ingestor.onChange((object, removed) => tracker.observe(object, removed));
  const missingCount = () =>
    index.constraintsForNamespace('shop').filter((constraint) => constraint.type === 'MissingResource')
      .length;
  return { index, ingestor, tracker, missingCount, looks: () => looks, atLook };
}

/** Resolves after one turn of the event loop's check phase (one background slice at most). */
const nextSlice = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('missing companions evaluated in the background', () => {
  it('works the findings out in slices and writes them in one step once complete', async () => {
    const seenMidway: number[] = [];
    const cluster = slicedTracker({ 4: () => seenMidway.push(cluster.missingCount()) });
    for (const object of [...crds, ...storefronts(WORKLOADS)]) cluster.ingestor.upsert(object);
    await cluster.tracker.idle();
    // Looked at while the evaluation was under way: nothing written yet.
    expect(seenMidway).toEqual([0]);
    expect(cluster.missingCount()).toBe(WORKLOADS);
    // Seven slices of at most 32 workloads: a look at the start of each, one at the end of all but the last.
    expect(cluster.looks()).toBe(13);
  });

  it('a reader sees the previous findings until the next evaluation is complete', async () => {
    const seenMidway: number[] = [];
    const cluster = slicedTracker();
    for (const object of [...crds, ...storefronts(WORKLOADS)]) cluster.ingestor.upsert(object);
    await cluster.tracker.idle();
    expect(cluster.missingCount()).toBe(WORKLOADS);
    // The issuer arrives: while the next evaluation is under way, the previous findings hold.
    cluster.atLook[cluster.looks() + 4] = () => seenMidway.push(cluster.missingCount());
    cluster.ingestor.upsert(issuer);
    await cluster.tracker.idle();
    expect(seenMidway).toEqual([WORKLOADS]);
    expect(cluster.missingCount()).toBe(0);
  });

  it('a change during an evaluation is evaluated after it: the last state wins', async () => {
    const cluster = slicedTracker({ 4: () => cluster.ingestor.upsert(issuer) });
    // The issuer arrives while the first evaluation (which began without it) is under way.
    for (const object of [...crds, ...storefronts(WORKLOADS)]) cluster.ingestor.upsert(object);
    await cluster.tracker.idle();
    expect(cluster.missingCount()).toBe(0);
    cluster.ingestor.delete(issuer);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await nextSlice();
    cluster.ingestor.upsert(issuer);
    await cluster.tracker.idle();
    expect(cluster.missingCount()).toBe(0);
  });

  it('a synchronous evaluation (one-shot commands) replaces one under way and writes at once', async () => {
    const { ingestor, tracker, missingCount } = slicedTracker();
    for (const object of [...crds, ...storefronts(WORKLOADS)]) ingestor.upsert(object);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await nextSlice();
    tracker.evaluate();
    expect(missingCount()).toBe(WORKLOADS);
    await tracker.idle();
    expect(missingCount()).toBe(WORKLOADS);
    tracker.stop();
  });

  it('brings findings up to date within the ceiling while changes keep coming faster than the delay', () => {
    jest.useFakeTimers();
    try {
      const index = new ConstraintIndex();
      const ingestor = new Ingestor(index, new AdapterRegistry());
      const tracker = new MissingResourceTracker(index, {
        debounceMs: 0,
        disabledRules: new Set(['mesh-mtls', 'monitoring']),
        meshRootNamespace: 'istio-system',
        defaultContact: 'platform@example.com',
        canSee: () => true,
        evaluationDelayMs: 100,
        maxEvaluationWaitMs: 500,
      });
      ingestor.onChange((object, removed) => tracker.observe(object, removed));
      const missing = () =>
        index.constraintsForNamespace('shop').filter((constraint) => constraint.type === 'MissingResource')
          .length;
      for (const object of crds) ingestor.upsert(object);
      // A new workload every 50 ms, each restarting the 100 ms delay, for 1.5 s.
      const seen: number[] = [];
      storefronts(30).forEach((workload) => {
        ingestor.upsert(workload);
        jest.advanceTimersByTime(50);
        seen.push(missing());
      });
      // Without the ceiling nothing would be evaluated before the stream stops.
      expect(seen.slice(0, 9).every((count) => count === 0)).toBe(true);
      expect(seen[12]).toBeGreaterThan(0);
      expect(seen[29]).toBeGreaterThanOrEqual(20);
      jest.advanceTimersByTime(200);
      expect(missing()).toBe(30);
      tracker.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
