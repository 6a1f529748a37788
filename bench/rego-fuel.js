// @ts-check
'use strict';

// Rego fuel calibration (issue 32, docs/benchmarks.md "Rego on the event loop"): how many
// nanoseconds one fuel unit (wasm-fuel.ts) stands for at worst, over adversarial templates (tight
// loops, memory-heavy loops, nested comprehensions, string building, regexes, host built-ins), and
// how much of a template's budget the fidelity suite's real templates spend on ordinary objects.
// Each adversarial template runs until it has spent FUEL units (it traps); each real one on the
// bench's Deployment. Prints one JSON line.
//   node bench/rego-fuel.js [fuel per run, default 50000000]

const { readFileSync } = require('node:fs');
const path = require('node:path');
const { parseAllDocuments } = require('yaml');
const { RegoEngine } = require('../dist/services/controller/verdicts/gatekeeper/rego-engine');
const {
  REGO_OBJECT_FUEL,
  REGO_TEMPLATE_FUEL,
} = require('../dist/services/controller/verdicts/gatekeeper/rego-template');

const FUEL = Number(process.argv[2] || 50_000_000);
const OPA = process.env.FOREWARN_OPA_BIN || '/var/cache/forewarn-e2e/tools/opa-v1.22.3/opa';
const TEMPLATES = path.join(__dirname, '../test/fidelity/gatekeeper/templates.yaml');

/** @param {string} name @param {string} body */
const rego = (name, body) => ({ rego: `package ${name}\n${body}\n`, libs: [] });

const ADVERSARIAL = {
  'tight nested comprehension': rego(
    'tight',
    'violation[{"msg": "x"}] { count([1 | numbers.range(1, 100000)[_]; numbers.range(1, 100000)[_]]) > 0 }',
  ),
  'set building (memory, hashing)': rego(
    'setbuild',
    'violation[{"msg": "x"}] { count({x | x := numbers.range(1, 5000000)[_]}) > 0 }',
  ),
  'object building': rego(
    'objbuild',
    'violation[{"msg": "x"}] { count({sprintf("%d", [x]): x | x := numbers.range(1, 5000000)[_]}) > 0 }',
  ),
  'string building (concat)': rego(
    'strbuild',
    'violation[{"msg": "x"}] { s := concat(",", [format_int(x, 10) | x := numbers.range(1, 5000000)[_]]); count(s) > 0 }',
  ),
  'string doubling (concat of itself)': rego(
    'strdouble',
    `violation[{"msg": "x"}] { a := concat("", [input.review.object.metadata.name | numbers.range(1, 1000)[_]]); b := concat("", [a | numbers.range(1, 1000)[_]]); c := concat("", [b | numbers.range(1, 60)[_]]); count(c) > 0 }`,
  ),
  'bulk copies (large strings)': rego(
    'bulkcopy',
    `violation[{"msg": "x"}] { big := concat("", [input.review.object.metadata.name | numbers.range(1, 200000)[_]]); count([1 | numbers.range(1, 100000)[_]; count(concat("", [big, "x"])) > 0]) > 0 }`,
  ),
  'regex in Wasm (RE2)': rego(
    'regexwasm',
    'violation[{"msg": "x"}] { count([1 | numbers.range(1, 1000000)[_]; regex.match("^(a|b|c)*d$", "abcabcabcabcabcabcabcabcabcabcd")]) > 0 }',
  ),
  'sort (comparisons)': rego(
    'sorting',
    'violation[{"msg": "x"}] { count([sort([y | y := numbers.range(1, 20000)[_]]) | numbers.range(1, 1000)[_]]) > 0 }',
  ),
  'json marshal round trip': rego(
    'jsonround',
    'violation[{"msg": "x"}] { count([json.unmarshal(json.marshal(input.review.object)) | numbers.range(1, 1000000)[_]]) > 0 }',
  ),
  'walk (recursion over the object)': rego(
    'walking',
    'violation[{"msg": "x"}] { count([1 | numbers.range(1, 1000000)[_]; walk(input.review.object, [p, v])]) > 0 }',
  ),
  'host sprintf': rego(
    'hostsprintf',
    'violation[{"msg": "x"}] { count([sprintf("%v %v", [x, input.review.object.metadata]) | x := numbers.range(1, 1000000)[_]]) > 0 }',
  ),
  'host regex.split (RE2)': rego(
    'hostsplit',
    'violation[{"msg": "x"}] { count([regex.split("(a+)+b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaac") | numbers.range(1, 1000000)[_]]) > 0 }',
  ),
  'host yaml': rego(
    'hostyaml',
    'violation[{"msg": "x"}] { count([yaml.unmarshal("a: [1, 2, {b: c}]") | numbers.range(1, 1000000)[_]]) > 0 }',
  ),
};

function deployment() {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'bench', labels: { app: 'web', owner: 'team' } },
    spec: {
      replicas: 3,
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              resources: {
                limits: { cpu: '500m', memory: '256Mi' },
                requests: { cpu: '100m', memory: '128Mi' },
              },
              securityContext: { privileged: false },
            },
            { name: 'sidecar', image: 'registry.example.com/sidecar:2', securityContext: {} },
          ],
        },
      },
    },
  };
}

const encoder = new TextEncoder();

/** @param {unknown} parameters */
function input(parameters) {
  const object = deployment();
  return [
    encoder.encode(
      `{"review":${JSON.stringify({ kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, name: 'web', namespace: 'bench', operation: 'CREATE', object, oldObject: null })}`,
    ),
    encoder.encode(`,"parameters":${JSON.stringify(parameters)}}`),
  ];
}

/** @param {RegoEngine} engine @param {{rego: string, libs: string[]}} code */
async function ready(engine, code) {
  engine.policyFor(code);
  await engine.settled();
  const compiled = engine.policyFor(code);
  if (compiled.state !== 'ready') throw new Error(`not compiled: ${JSON.stringify(compiled)}`);
  return compiled.policy;
}

/** @type {Record<string, Record<string, unknown>>} */
const PARAMETERS = {
  k8srequiredlabels: { labels: [{ key: 'owner' }] },
  k8scontainerlimits: { cpu: '1', memory: '1Gi' },
  k8sreplicalimits: { ranges: [{ min_replicas: 1, max_replicas: 50 }] },
  k8snamespaceowner: { label: 'owner' },
};

async function main() {
  const engine = new RegoEngine(OPA);
  /** @type {Record<string, unknown>} */
  const adversarial = {};
  let worstNanoseconds = 0;
  for (const [name, code] of Object.entries(ADVERSARIAL)) {
    const policy = await ready(engine, code);
    const runs = [];
    for (let run = 0; run < 3; run++) {
      const cpuBefore = process.cpuUsage();
      const before = performance.now();
      const { reply, used } = engine.evaluator.evaluate(policy, input({}), FUEL);
      const wall = performance.now() - before;
      const cpu = process.cpuUsage(cpuBefore);
      runs.push({
        reply: typeof reply === 'string' ? reply : Object.keys(reply)[0],
        used,
        wall,
        cpu: (cpu.user + cpu.system) / 1000,
      });
    }
    const best = runs.reduce((left, right) => (left.cpu < right.cpu ? left : right));
    const nanosecondsPerUnit = (best.cpu * 1e6) / Math.max(1, best.used);
    worstNanoseconds = Math.max(worstNanoseconds, nanosecondsPerUnit);
    adversarial[name] = {
      reply: best.reply,
      used: best.used,
      cpuMilliseconds: Number(best.cpu.toFixed(1)),
      wallMilliseconds: Number(best.wall.toFixed(1)),
      nanosecondsPerUnit: Number(nanosecondsPerUnit.toFixed(3)),
    };
  }
  /** @type {Record<string, unknown>} */
  const real = {};
  for (const document of parseAllDocuments(readFileSync(TEMPLATES, 'utf8'))) {
    const template = document.toJS();
    const target = template.spec.targets[0];
    if (!target.rego) continue;
    const name = String(template.metadata.name);
    const policy = await ready(engine, { rego: target.rego, libs: target.libs ?? [] });
    const data = {
      inventory: {
        cluster: { v1: { Namespace: { bench: { metadata: { name: 'bench', labels: { owner: 'x' } } } } } },
        namespace: {},
      },
    };
    const { reply, used } = engine.evaluator.evaluate(
      policy,
      input(PARAMETERS[name] ?? {}),
      REGO_TEMPLATE_FUEL,
      { key: 'k', data },
    );
    real[name] = {
      reply: typeof reply === 'string' ? reply : Object.keys(reply)[0],
      used,
      shareOfTemplateBudget: Number((used / REGO_TEMPLATE_FUEL).toFixed(5)),
    };
  }
  console.log(
    JSON.stringify({
      fuelPerRun: FUEL,
      templateFuel: REGO_TEMPLATE_FUEL,
      objectFuel: REGO_OBJECT_FUEL,
      worstNanosecondsPerUnit: Number(worstNanoseconds.toFixed(3)),
      worstMillisecondsAtTemplateBudget: Number(((worstNanoseconds * REGO_TEMPLATE_FUEL) / 1e6).toFixed(1)),
      worstMillisecondsAtObjectBudget: Number(((worstNanoseconds * REGO_OBJECT_FUEL) / 1e6).toFixed(1)),
      adversarial,
      real,
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
