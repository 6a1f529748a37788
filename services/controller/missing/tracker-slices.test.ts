import path from 'node:path';
import { ConstraintIndex } from '../index/constraint-index';
import { AdapterRegistry } from '../adapters/registry';
import { Ingestor } from '../index/ingest';
import type { KubernetesObject } from '../../model/kubernetes';
import { fixture, loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { MissingResourceTracker } from './tracker';

// The controller's evaluation of missing companions after a change (issue 35's admission p99 during a
// policy change): worked out in slices, written in one step, so that a reader sees the previous
// findings until the new ones are complete, and a newer change's evaluation replaces one under way.

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

/** A tracker evaluating in the background, whose clock moves 0.5 ms per look (one check per 1 ms slice). */
function slicedTracker() {
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
      return looks * 0.5;
    },
  );
  ingestor.onChange((object, removed) => tracker.observe(object, removed));
  const missingCount = () =>
    index.constraintsForNamespace('shop').filter((constraint) => constraint.type === 'MissingResource')
      .length;
  return { index, ingestor, tracker, missingCount, looks: () => looks };
}

/** Resolves after one turn of the event loop's check phase (one background slice at most). */
const nextSlice = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(() => jest.useRealTimers());

describe('missing companions evaluated in the background', () => {
  it('works the findings out in slices and writes them in one step once complete', async () => {
    const { ingestor, tracker, missingCount, looks } = slicedTracker();
    for (const object of [...crds, ...storefronts(WORKLOADS)]) ingestor.upsert(object);
    // The timer (delay 0) starts the evaluation; let it run a few slices: nothing written yet.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await nextSlice();
    await nextSlice();
    expect(looks()).toBeGreaterThan(0);
    expect(missingCount()).toBe(0);
    await tracker.idle();
    expect(missingCount()).toBe(WORKLOADS);
    // Several slices: two looks at the clock per slice.
    expect(looks()).toBeGreaterThan(8);
  });

  it('a reader sees the previous findings until the next evaluation is complete', async () => {
    const { ingestor, tracker, missingCount } = slicedTracker();
    for (const object of [...crds, ...storefronts(WORKLOADS)]) ingestor.upsert(object);
    await tracker.idle();
    expect(missingCount()).toBe(WORKLOADS);
    ingestor.upsert(issuer);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await nextSlice();
    expect(missingCount()).toBe(WORKLOADS);
    await tracker.idle();
    expect(missingCount()).toBe(0);
  });

  it('a change during an evaluation replaces it: the last state wins', async () => {
    const { ingestor, tracker, missingCount } = slicedTracker();
    for (const object of [...crds, ...storefronts(WORKLOADS)]) ingestor.upsert(object);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await nextSlice();
    // The issuer arrives while the first evaluation (which began without it) is under way.
    ingestor.upsert(issuer);
    await tracker.idle();
    expect(missingCount()).toBe(0);
    ingestor.delete(issuer);
    await new Promise((resolve) => setTimeout(resolve, 0));
    ingestor.upsert(issuer);
    await tracker.idle();
    expect(missingCount()).toBe(0);
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
});
