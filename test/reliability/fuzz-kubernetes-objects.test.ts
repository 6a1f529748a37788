import { readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { ADAPTERS } from '../../services/controller/adapters/registry';
import { GATEKEEPER_GROUP } from '../../services/controller/adapters/policyengine/gatekeeper';
import { answerResourceRequest } from '../../services/controller/http/resource-requests';
import { MissingResourceTracker } from '../../services/controller/missing/tracker';
import { buildConstraintList } from '../../services/controller/views/constraint-list';
import { DETAIL_LEVELS, isSeverity } from '../../services/model/api';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { demoClusterObjects, FIXED_NOW, indexObjects, runtimeStateFor } from '../support/controller-fixtures';
import { pathsOf, replaceAt } from '../support/mutate-object';
import { loadFixtureObjects } from '../support/yaml-fixtures';

// Random Kubernetes objects through every adapter, the way sources deliver them: via the Ingestor
// (which routes by group and kind, applies annotation overrides, retains related objects and feeds
// the missing-companion tracker). Objects are fixtures with any field replaced by any JSON value,
// or objects of every adapter kind with random contents. Only the envelope both sources check
// before the Ingestor sees an object is kept (string apiVersion and kind, a metadata mapping with a
// string name: manifest-parsing.ts rejects the rest, the API server never sends it); everything
// else, metadata.namespace, labels and annotations included, can be anything a YAML file can hold.
// Whatever arrives: no exception escapes the Ingestor, the tracker or any view; every answer
// serialises to JSON; and deleting everything that was added leaves an empty index with no parse
// error left behind.

const adapterFixtures = path.join(__dirname, '../../services/controller/adapters');
const missingFixtures = path.join(__dirname, '../../services/controller/missing/fixtures');

function fixtureFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? fixtureFiles(path.join(directory, entry.name))
      : entry.name.endsWith('.yaml')
        ? [path.join(directory, entry.name)]
        : [],
  );
}

const FIXTURES: KubernetesObject[] = [
  ...[...fixtureFiles(adapterFixtures), ...fixtureFiles(missingFixtures)].flatMap((file) => [
    ...loadFixtureObjects(file).values(),
  ]),
  ...demoClusterObjects(),
];

/** Every kind an adapter reads, a Gatekeeper constraint kind, and the kinds the Ingestor keeps itself. */
const KINDS: Array<{ apiVersion: string; kind: string }> = [
  ...ADAPTERS.flatMap((adapter) =>
    adapter.kinds.map((kind) => ({
      apiVersion: kind.group ? `${kind.group}/${kind.versions[0]}` : kind.versions[0],
      kind: kind.kind,
    })),
  ),
  { apiVersion: `${GATEKEEPER_GROUP}/v1beta1`, kind: 'K8sRequiredLabels' },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'batch/v1', kind: 'CronJob' },
];

const NAMESPACES = ['shop', 'payments', 'istio-system', 'default'];
const interestingString = fc.oneof(
  fc.constantFrom(
    '',
    '*',
    'shop',
    'a/b',
    '-',
    'Deny',
    'Warn',
    'Audit',
    'Fail',
    'Ignore',
    'STRICT',
    'DENY',
    '10Gi',
    '1e3',
    '-1',
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ minLength: 300, maxLength: 600 }),
);
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), interestingString);

const annotations = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'forewarn.io/severity',
      'forewarn.io/summary',
      'forewarn.io/contact',
      'forewarn.io/requires',
    ),
    fc.string({ maxLength: 8 }),
  ),
  fc.oneof(
    fc.constantFrom('Critical', 'Warning', 'Info', 'nonsense', 'v1/Secret/missing'),
    fc.string({ maxLength: 20 }),
  ),
  { maxKeys: 3 },
);

const randomObject: fc.Arbitrary<KubernetesObject> = fc
  .record({
    type: fc.constantFrom(...KINDS),
    name: fc.oneof(fc.constantFrom('a', 'b', 'web', 'policy'), interestingString),
    namespace: fc.option(fc.constantFrom(...NAMESPACES), { nil: undefined }),
    uid: fc.option(fc.constantFrom('uid-1', 'uid-2', 'uid-3'), { nil: undefined }),
    labels: fc.dictionary(fc.constantFrom('app', 'team', 'env'), fc.constantFrom('web', 'red', 'prod')),
    annotations,
    spec: jsonValue,
    webhooks: jsonValue,
    status: jsonValue,
  })
  .map(({ type, name, namespace, uid, labels, annotations: objectAnnotations, spec, webhooks, status }) => ({
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: { name, namespace, uid, labels, annotations: objectAnnotations },
    spec,
    webhooks,
    status,
  }));

const ENVELOPE_PATHS = new Set(['apiVersion', 'kind', 'metadata', 'metadata.name']);

const MUTABLE_FIXTURES = FIXTURES.map((object) => ({
  object,
  paths: pathsOf(object).filter((at) => at.length > 0 && !ENVELOPE_PATHS.has(at.join('.'))),
})).filter((fixture) => fixture.paths.length > 0);

const mutatedFixture: fc.Arbitrary<KubernetesObject> = fc
  .constantFrom(...MUTABLE_FIXTURES)
  .chain(({ object, paths }) => fc.tuple(fc.constant(object), fc.constantFrom(...paths), jsonValue))
  .map(([object, at, replacement]) => replaceAt(object, at, replacement));

const anyObject = fc.oneof(mutatedFixture, randomObject, fc.constantFrom(...FIXTURES));

const operations = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: anyObject.map((object) => ({ type: 'upsert' as const, object })) },
    { weight: 1, arbitrary: fc.nat().map((position) => ({ type: 'delete' as const, position })) },
  ),
  { minLength: 1, maxLength: 10 },
);

/** Every view of the namespaces an object could touch: at each detail level, all four resources. */
function exerciseViews(cluster: ReturnType<typeof indexObjects>): void {
  const dependencies = {
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster),
    configuredDetailLevel: 'full' as const,
    clock: () => FIXED_NOW,
  };
  const namespaces = new Set([...NAMESPACES, ...cluster.index.namespacesWithConstraints()]);
  for (const namespace of namespaces) {
    for (const level of DETAIL_LEVELS) {
      for (const resource of ['reports', 'health', 'capabilities']) {
        const answer = answerResourceRequest(dependencies, { resource, params: { namespace } }, [level]);
        JSON.stringify(answer.body);
        // A 400 is a fine answer for a namespace name the fuzzer made up; a 500 never is.
        expect(answer.status).toBeLessThan(500);
      }
      for (const constraint of cluster.index.constraintsForNamespace(namespace)) {
        const answer = answerResourceRequest(
          dependencies,
          { resource: 'constraints', params: { namespace, name: constraint.name } },
          [level],
        );
        JSON.stringify(answer.body);
        expect(answer.status).toBeLessThan(500);
      }
    }
    const list = buildConstraintList(cluster.index, {
      namespace,
      resource: { group: 'apps', resource: 'deployments' },
      labels: { app: 'web' },
    });
    for (const entry of list.constraints) {
      expect(isSeverity(entry.severity)).toBe(true);
      expect(typeof entry.summary).toBe('string');
    }
    JSON.stringify(list);
  }
}

describe('random Kubernetes objects through every adapter, via the Ingestor', () => {
  it('covers every adapter kind', () => {
    const covered = new Set(KINDS.map((type) => type.kind));
    for (const adapter of ADAPTERS) for (const kind of adapter.kinds) expect(covered).toContain(kind.kind);
    expect(FIXTURES.length).toBeGreaterThan(50);
  });

  it('never throws, serves every view, and leaves nothing behind once everything is deleted', () => {
    fc.assert(
      fc.property(operations, (steps) => {
        const cluster = indexObjects([]);
        const tracker = new MissingResourceTracker(cluster.index, {
          debounceMs: 0,
          disabledRules: new Set(),
          meshRootNamespace: 'istio-system',
          defaultContact: 'platform-team@example.com',
          canSee: () => true,
          evaluationDelayMs: 60_000,
        });
        cluster.ingestor.onChange((object, removed) => tracker.observe(object, removed));
        const added: KubernetesObject[] = [];
        try {
          for (const step of steps) {
            if (step.type === 'upsert') {
              cluster.ingestor.upsert(step.object);
              added.push(step.object);
            } else if (added.length > 0) {
              cluster.ingestor.delete(added[step.position % added.length]);
            }
          }
          tracker.evaluate();
          exerciseViews(cluster);
          for (const object of [...added].reverse()) cluster.ingestor.delete(object);
          tracker.evaluate();
          expect(cluster.index.allConstraints()).toEqual([]);
          expect(cluster.parseErrors.failingObjects()).toEqual([]);
        } finally {
          tracker.stop();
        }
      }),
      { numRuns: 600 },
    );
  });
});
