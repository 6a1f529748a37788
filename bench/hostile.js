// @ts-check
'use strict';

// Issue 27: the hostile evaluations as a benchmark. For each matcher that runs on caller input, the
// time of one evaluation at doubling input sizes, reported as the growth ratio per doubling:
// (time at 2n / time at n) / 2 — about 1 when the work is linear, about 2 when it is quadratic.
// Times are medians of repeated evaluations in this process, compared only with each other.
// `node bench/hostile.js <matcher>` prints one JSON line for that matcher; bench/run.js runs each
// in its own process with a time limit, so a matcher that is not linear shows as unfinished.

const { AdapterRegistry } = require('../dist/services/controller/adapters/registry');
const { ConstraintIndex } = require('../dist/services/controller/index/constraint-index');
const { Ingestor, ParseErrorCounter } = require('../dist/services/controller/index/ingest');
const { evaluateVerdicts } = require('../dist/services/controller/verdicts/evaluate');
const { verdictIndexOf } = require('../dist/services/controller/verdicts/admission-check');
const { parseQuantity } = require('../dist/services/model/quantity');
const { matchesWildcard } = require('../dist/services/model/wildcard');

const NAMESPACE = 'bench';
/** No guard limits: the benchmark measures the matchers, not the guard stopping them. */
const UNLIMITED = { deadlineMilliseconds: Number.POSITIVE_INFINITY, workBudget: Number.POSITIVE_INFINITY };

/** @param {string} expression */
function celEvaluation(expression) {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
  for (const object of [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'hostile', uid: 'vap-hostile' },
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
          ],
        },
        validations: [{ expression, message: 'hostile' }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'hostile-binding', uid: 'vapb-hostile' },
      spec: { policyName: 'hostile', validationActions: ['Deny'] },
    },
  ])
    ingestor.upsert(object);
  const constraints = index
    .constraintsForNamespace(NAMESPACE)
    .filter((constraint) => constraint.source.kind === 'ValidatingAdmissionPolicyBinding');
  /** @param {object[]} containers */
  return (containers) => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: NAMESPACE },
      spec: { containers },
    };
    const context = {
      admitted: {
        object,
        operation: /** @type {const} */ ('CREATE'),
        namespace: NAMESPACE,
        namespaceLabels: {},
      },
      index: verdictIndexOf(index),
    };
    return evaluateVerdicts(constraints, context, UNLIMITED);
  };
}

/**
 * Each matcher: the sizes (doubling) and one evaluation at a size.
 * @type {Record<string, {unit: string, sizes: number[], prepare: (size: number) => () => unknown}>}
 */
const MATCHERS = {
  quantity: {
    unit: 'fraction digits',
    sizes: [16_000, 32_000, 64_000, 128_000],
    prepare: (size) => {
      const text = `0.${'0'.repeat(size)}1`;
      return () => parseQuantity(text);
    },
  },
  wildcard: {
    unit: 'image characters',
    sizes: [45_000, 90_000, 180_000, 360_000],
    prepare: (size) => {
      const image = '.dkr.ecr.'.repeat(size / 9);
      return () => matchesWildcard('*.dkr.ecr.*.amazonaws.com/*', image);
    },
  },
  'cel find': {
    unit: 'image characters',
    sizes: [1_000, 2_000, 4_000, 8_000],
    prepare: (size) => {
      const evaluate = celEvaluation(
        "object.spec.containers.all(c, c.image.find('^([a-z0-9]+[._-]?)+(:[a-z0-9._-]+)?$') != '')",
      );
      const containers = [{ name: 'app', image: `${'a'.repeat(size)}!` }];
      return () => evaluate(containers);
    },
  },
  'cel replace': {
    unit: 'image characters',
    sizes: [27_500, 55_000, 110_000, 220_000],
    prepare: (size) => {
      const evaluate = celEvaluation(
        "object.spec.containers.all(c, c.image.replace('docker.io/', '') != '')",
      );
      const containers = [{ name: 'app', image: 'docker.io/a'.repeat(size / 11) }];
      return () => evaluate(containers);
    },
  },
  'cel exists_one': {
    unit: 'containers',
    sizes: [1_000, 2_000, 4_000, 8_000],
    prepare: (size) => {
      const evaluate = celEvaluation("object.spec.containers.exists_one(d, d.name == 'c0')");
      const containers = Array.from({ length: size }, (_, position) => ({
        name: `c${position}`,
        image: 'app:1',
      }));
      return () => evaluate(containers);
    },
  },
};

/** Median wall time of one call, in milliseconds, over enough calls to take about 200 ms. */
/** @param {() => unknown} call */
function medianMilliseconds(call) {
  call();
  const samples = [];
  const started = performance.now();
  while (samples.length < 5 || (performance.now() - started < 200 && samples.length < 200)) {
    const before = performance.now();
    call();
    samples.push(performance.now() - before);
  }
  samples.sort((left, right) => left - right);
  return samples[Math.floor(samples.length / 2)];
}

/**
 * What this script prints for one matcher, for bench/run.js.
 * @typedef {object} HostileOutput
 * @property {string} matcher
 * @property {string} unit
 * @property {Array<{size: number, milliseconds: number}>} points
 * @property {number[]} growthPerDoubling
 */

const name = process.argv[2] ?? 'quantity';
// Issue 32: the worst event-loop hold and heap growth per engine (bench/lib/hostile-engines.js).
if (name === 'engines') void require('./lib/hostile-engines').main();
else runMatcher(name);

/** @param {string} name */
function runMatcher(name) {
  const matcher = MATCHERS[name];
  if (!matcher) throw new Error(`unknown matcher ${name}; one of ${Object.keys(MATCHERS).join(', ')}`);
  // Two passes over the sizes, the first only to let V8 compile and settle every path; the second counts.
  const measure = () =>
    matcher.sizes.map((size) => ({ size, milliseconds: medianMilliseconds(matcher.prepare(size)) }));
  measure();
  const points = measure();
  const growthPerDoubling = points
    .slice(1)
    .map(
      (point, position) =>
        point.milliseconds / points[position].milliseconds / (point.size / points[position].size),
    );
  /** @type {HostileOutput} */
  const output = { matcher: name, unit: matcher.unit, points, growthPerDoubling };
  console.log(JSON.stringify(output));
}
