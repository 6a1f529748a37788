import path from 'node:path';
import type { KubernetesObject } from '../../../model/kubernetes';
import { renderFullText } from '../../../model/text';
import { loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { opaBinary } from '../../../../test/support/opa-binary';
import { AdapterRegistry } from '../../adapters/registry';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { verdictIndexOf } from '../admission-check';
import { evaluateVerdicts } from '../evaluate';
import { regoEngine } from './rego-engine';

// The Gatekeeper suite of the fidelity tier (test/fidelity/gatekeeper/), through the real ingest
// layer and the shared evaluator: CEL templates on the CEL evaluator, Rego on OPA (compiled by the
// opa binary, evaluated in-process), match and enforcement semantics, referential data.

const suite = path.join(__dirname, '../../../../test/fidelity/gatekeeper');
const load = (file: string) => [...loadFixtureObjects(path.join(suite, file)).values()];
const workloads = load('workloads.yaml');

function cluster(extra: KubernetesObject[] = []) {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry());
  for (const object of [...load('templates.yaml'), ...load('constraints.yaml'), ...workloads, ...extra])
    ingestor.upsert(object);
  return { index, ingestor };
}

function workload(name: string): KubernetesObject {
  const found = workloads.find((object) => object.metadata?.name === name);
  if (!found) throw new Error(`no workload ${name}`);
  return found;
}

/** Constraint name → verdict (and the first evidence message) for one object. */
function verdictsFor(index: ConstraintIndex, object: KubernetesObject) {
  const namespace = object.metadata?.namespace ?? 'default';
  const constraints = index
    .constraintsForNamespace(namespace)
    .filter((constraint) => constraint.source.apiVersion.startsWith('constraints.gatekeeper.sh/'));
  const verdicts = evaluateVerdicts(constraints, {
    admitted: { object, operation: 'CREATE', namespace, namespaceLabels: index.labelsOfNamespace(namespace) },
    index: verdictIndexOf(index),
  });
  return Object.fromEntries(
    verdicts.map(({ constraint, verdict }) => [
      constraint.name,
      verdict.verdict === 'violates'
        ? `violates: ${verdict.evidence.map((evidence) => `${evidence.path} ${renderFullText(evidence.message)}`).join(' | ')}`
        : verdict.verdict === 'unknown'
          ? `unknown: ${renderFullText(verdict.reason ?? [])}`
          : verdict.verdict,
    ]),
  );
}

// One cluster for the tests that only read it: templates compile once per revision, as in the controller.
let shared: ReturnType<typeof cluster>;

beforeAll(async () => {
  regoEngine.configure(opaBinary());
  shared = cluster();
  // Compilation starts on first sight of each template and runs in the background.
  for (const object of workloads.filter((entry) => entry.kind !== 'Namespace'))
    verdictsFor(shared.index, object);
  await regoEngine.settled();
  // A cold tools/build-opa.sh takes about 6 minutes (warm: instant).
}, 900_000);

describe('Gatekeeper verdicts', () => {
  it('passes a compliant Deployment on every constraint that matches it', () => {
    const { index } = shared;
    expect(verdictsFor(index, workload('web'))).toEqual({
      'workloads-must-have-owner': 'passes',
      'images-from-internal-registry': 'passes',
      'containers-need-limits': 'passes',
      'no-privileged-containers': 'passes',
      'no-host-namespaces': 'passes',
      'replicas-between-2-and-20': 'passes',
      'namespace-must-name-owner': 'passes',
    });
  });

  it("reports Gatekeeper's messages, with the failing container's path where a message names it", () => {
    const { index } = shared;
    const verdicts = verdictsFor(index, workload('legacy'));
    // Gatekeeper prints the set as {"owner"}: the Wasm SDK hands sets to sprintf as lists (rego-sprintf.ts).
    expect(verdicts['workloads-must-have-owner']).toBe('violates:  you must provide labels: ["owner"]');
    expect(verdicts['images-from-internal-registry']).toBe(
      'violates: spec.template.spec.containers[0] container <legacy> has an invalid image repo <docker.io/library/nginx:1.27>, allowed repos are ["registry.example.com/", "ghcr.io/example/"]',
    );
    // CEL (the template carries both engines): the validations' messages.
    expect(verdicts['containers-need-limits']).toMatch(
      /^violates: {2}containers must set a memory limit: legacy \| {2}containers must set a cpu limit$/,
    );
    expect(verdicts['replicas-between-2-and-20']).toMatch(
      /^violates: .*The provided number of replicas is not allowed for Deployment: legacy/,
    );
  });

  it('reads Namespaces from the index as Gatekeeper reads its synced data (data.inventory)', () => {
    const { index } = shared;
    expect(verdictsFor(index, workload('api'))['namespace-must-name-owner']).toBe(
      'violates:  namespace payments has no owner label: workloads there need an owner',
    );
  });

  it('honours labelSelector, namespaces and excludedNamespaces of match', () => {
    const { index } = shared;
    const tuner = verdictsFor(index, workload('node-tuner'));
    expect(tuner['no-privileged-containers']).toBeUndefined();
    const agent = verdictsFor(index, workload('node-agent'));
    expect(agent['workloads-must-have-owner']).toBeUndefined();
    expect(agent['images-from-internal-registry']).toBeUndefined();
    expect(agent['no-host-namespaces']).toBe(
      'violates:  Sharing the host namespace is not allowed: node-agent',
    );
  });

  it('maps enforcementAction to severity: deny Critical, warn Warning, dryrun not at admission', () => {
    const { index } = shared;
    const byName = Object.fromEntries(
      index.constraintsForNamespace('shop').map((entry) => [entry.name, entry]),
    );
    expect(byName['workloads-must-have-owner']).toMatchObject({ severity: 'Critical', effect: 'deny' });
    expect(byName['containers-need-limits']).toMatchObject({ severity: 'Warning', effect: 'warn' });
    expect(byName['replicas-between-2-and-20']).toMatchObject({ severity: 'Info', effect: 'audit' });
  });

  it("runs a CEL template's match conditions before its validations, as Gatekeeper's CEL driver does", () => {
    const templateWith = (kind: string, failurePolicy: string, condition: string): KubernetesObject => ({
      apiVersion: 'templates.gatekeeper.sh/v1',
      kind: 'ConstraintTemplate',
      metadata: { name: kind.toLowerCase() },
      spec: {
        crd: { spec: { names: { kind } } },
        targets: [
          {
            target: 'admission.k8s.gatekeeper.sh',
            code: [
              {
                engine: 'K8sNativeValidation',
                source: {
                  failurePolicy,
                  matchConditions: [{ name: 'owned', expression: condition }],
                  validations: [{ expression: 'object.spec.replicas < 2', message: 'too many replicas' }],
                },
              },
            ],
          },
        ],
      },
    });
    const constraintOf = (kind: string): KubernetesObject => ({
      apiVersion: 'constraints.gatekeeper.sh/v1beta1',
      kind,
      metadata: { name: `${kind.toLowerCase()}-everywhere` },
      spec: { match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] } },
    });
    const owned = "has(object.metadata.labels) && 'owner' in object.metadata.labels";
    const failing = 'object.metadata.missing == 1';
    const extra = [
      templateWith('K8sOwnedReplicas', 'Fail', owned),
      constraintOf('K8sOwnedReplicas'),
      templateWith('K8sBrokenConditionFail', 'Fail', failing),
      constraintOf('K8sBrokenConditionFail'),
      templateWith('K8sBrokenConditionIgnore', 'Ignore', failing),
      constraintOf('K8sBrokenConditionIgnore'),
    ];
    const { index } = cluster(extra);
    // `web` has an owner label and three replicas: the condition holds, the validation fails.
    const web = verdictsFor(index, workload('web'));
    expect(web['k8sownedreplicas-everywhere']).toBe('violates: spec.replicas too many replicas');
    // `legacy` has no labels: the condition excludes it, so the template does not apply.
    expect(verdictsFor(index, workload('legacy'))['k8sownedreplicas-everywhere']).toBeUndefined();
    // A condition that cannot be evaluated: Fail rejects, Ignore leaves the object alone.
    expect(web['k8sbrokenconditionfail-everywhere']).toBe(
      'violates:  match condition owned cannot be evaluated and the template fails closed',
    );
    expect(web['k8sbrokenconditionignore-everywhere']).toBeUndefined();
  });

  it('is unknown, saying why, without its template or without opa', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry());
    for (const object of load('constraints.yaml')) ingestor.upsert(object);
    expect(verdictsFor(index, workload('web'))['workloads-must-have-owner']).toBe(
      'unknown: its ConstraintTemplate k8srequiredlabels is not in the index',
    );
    const opa = regoEngine.opa;
    try {
      regoEngine.configure('/nonexistent/opa');
      const changed = load('templates.yaml').map((template) => ({
        ...template,
        spec: JSON.parse(JSON.stringify(template.spec).replaceAll('you must provide', 'please provide')),
      }));
      const { index: other } = cluster(changed);
      expect(verdictsFor(other, workload('legacy'))['workloads-must-have-owner']).toBe(
        "unknown: Rego templates need Open Policy Agent's opa binary to be compiled: the controller image ships it; elsewhere put opa on PATH or pass --opa-path",
      );
      // CEL templates need no opa.
      expect(verdictsFor(other, workload('debug'))['no-host-namespaces']).toMatch(/^violates: /);
    } finally {
      regoEngine.configure(opa);
    }
  });
});
