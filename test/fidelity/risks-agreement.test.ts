import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { checkedEntry } from '../../services/controller/verdicts/admission-check';
import { regoEngine } from '../../services/controller/verdicts/gatekeeper/rego-engine';
import { keepWorkload, rolloutVerdicts } from '../../services/controller/risks/workload-risk';
import { indexObjects } from '../support/controller-fixtures';
import { opaBinary } from '../support/opa-binary';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { ControllerApi, ManagedProcess, requireBuiltEntries } from '../e2e/forewarn-support';
import { controllerReady, launchController } from '../e2e/controller-process';
import { crdManifest } from '../e2e/forewarn-crds';
import { podSecurityDenial, rejectedWith, waitUntilEnforced } from '../e2e/enforcement';
import {
  admissionPolicies,
  constraintPlural,
  gatekeeperConstraints,
  gatekeeperTemplates,
  kyvernoPolicies,
  NAMESPACES,
  namespaces,
  POD_SECURITY_LEVELS,
  workloads,
} from './risks/inventory';
import {
  gatorViolations,
  kyvernoVerdicts,
  mapConcurrently,
  readInventory,
  serverRollout,
  setPair,
  workloadKey,
  type EngineVerdict,
  type PairVerdicts,
  type ServerAnswer,
} from './risks/oracles';
import { comparePairs, formatTable, type EngineComparison } from './risks/comparison';

// Workloads at risk against the engines themselves (issue 35): on kube-apiserver v1.34.4 (the e2e
// tier's cluster), workloads of every kind run in three namespaces; then policies of each engine are
// applied, as a tightened policy would be: ValidatingAdmissionPolicies and bindings, Pod Security
// labels, Kyverno ClusterPolicies and a Policy, Gatekeeper templates and constraints. The controller
// watches it all; its workloads at risk (`GET /resources/risks/{ns}`) are compared per (workload,
// policy) pair with `kyverno apply`, `gator test` and `kubectl --dry-run=server` of each workload's
// rollout (with every binding and Pod Security label switched to its warning form in a copy, so one
// dry-run names every policy a workload fails). Target: every pair both decide agrees; Forewarn
// decides at least 95% of the pairs the engines decide. Allowed differences are listed with their
// reason in risks-allow-list.yaml. Prints the table for docs/accuracy.md.

const KYVERNO = process.env.FOREWARN_KYVERNO_BIN ?? '';
const GATOR = process.env.FOREWARN_GATOR_BIN ?? '';
const ALLOW_LIST = path.join(__dirname, 'risks-allow-list.yaml');
const DECIDED_TARGET = 0.95;

interface AllowedDifference {
  engine: string;
  policy: string;
  workload: string;
  reason: string;
}

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let workDirectory = '';

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
  // FOREWARN_KEEP_FIDELITY_FILES=1 keeps the engines' inputs for a look after a failure.
  if (workDirectory && !process.env.FOREWARN_KEEP_FIDELITY_FILES)
    rmSync(workDirectory, { recursive: true, force: true });
});

const started = (): Cluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

async function applyAll(objects: readonly unknown[]): Promise<void> {
  const result = await started().kubectl(['apply', '-f', '-'], {
    stdin: objects.map((object) => JSON.stringify(object)).join('\n'),
  });
  if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
}

async function getJson(args: string[]): Promise<KubernetesObject[]> {
  const result = await started().kubectl(['get', ...args, '-o', 'json']);
  if (result.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { items?: KubernetesObject[] } & KubernetesObject;
  return parsed.items ?? [parsed];
}

function crds(): string {
  const gatekeeperKinds = gatekeeperConstraints().map((constraint) => String(constraint.kind));
  return [
    {
      group: 'templates.gatekeeper.sh',
      version: 'v1',
      kind: 'ConstraintTemplate',
      plural: 'constrainttemplates',
    },
    ...[...new Set(gatekeeperKinds)].map((kind) => ({
      group: 'constraints.gatekeeper.sh',
      version: 'v1beta1',
      kind,
      plural: constraintPlural(kind),
    })),
    { group: 'kyverno.io', version: 'v1', kind: 'ClusterPolicy', plural: 'clusterpolicies' },
  ]
    .map((crd) => crdManifest({ ...crd, scope: 'Cluster' }))
    .concat(
      crdManifest({
        group: 'kyverno.io',
        version: 'v1',
        kind: 'Policy',
        plural: 'policies',
        scope: 'Namespaced',
      }),
    )
    .join('\n---\n');
}

interface ForewarnPair {
  verdict: EngineVerdict;
  /** Whether the finding would reject the workload (a denying source), for the at-risk set. */
  rejects: boolean;
}

/** Forewarn's verdict per engine, policy and workload: the risks' own evaluation, every verdict kept. */
function forewarnVerdicts(
  stored: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
): Map<string, Map<string, Map<string, ForewarnPair>>> {
  const { index } = indexObjects(stored);
  const byEngine = new Map<string, Map<string, Map<string, ForewarnPair>>>();
  for (const manifest of manifests)
    for (const { constraint, verdict } of rolloutVerdicts(index, keepWorkload(manifest))) {
      const namespace = String(manifest.metadata?.namespace);
      const entry = checkedEntry(constraint, verdict, manifest, { level: 'full', namespace });
      const engine = engineOf(entry.sourceKind, entry.sourceApiVersion);
      if (!engine) continue;
      const policy =
        engine === 'api-server'
          ? entry.sourceKind === 'Namespace'
            ? 'psa'
            : `vap:${entry.sourceName}`
          : entry.name;
      const decided: EngineVerdict =
        verdict.verdict === 'violates' ? 'violates' : verdict.verdict === 'passes' ? 'passes' : 'undecided';
      const policies = byEngine.get(engine) ?? new Map<string, Map<string, ForewarnPair>>();
      byEngine.set(engine, policies);
      const pairs = policies.get(policy) ?? new Map<string, ForewarnPair>();
      policies.set(policy, pairs);
      const previous = pairs.get(workloadKey(manifest));
      if (previous?.verdict === 'violates') continue;
      pairs.set(workloadKey(manifest), {
        verdict: decided,
        rejects: decided === 'violates' && (entry.effect === 'deny' || entry.effect === 'limit'),
      });
    }
  return byEngine;
}

function engineOf(sourceKind: string, sourceApiVersion: string): string | undefined {
  if (sourceKind === 'ValidatingAdmissionPolicyBinding' || sourceKind === 'Namespace') return 'api-server';
  if (sourceApiVersion.startsWith('kyverno.io/')) return 'kyverno';
  if (sourceApiVersion.startsWith('constraints.gatekeeper.sh/')) return 'gatekeeper';
  return undefined;
}

interface RiskEntry {
  kind: string;
  namespace: string;
  name: string;
  findings: Array<{ name: string; verdict: string }>;
}

/** The controller's workloads at risk: `<kind>/<namespace>/<name> <constraint>` of each finding. */
async function controllerRisks(api: ControllerApi): Promise<{ settled: boolean; findings: string[] }> {
  const findings: string[] = [];
  let settled = true;
  for (const namespace of NAMESPACES) {
    const response = await fetch(`${api.baseUrl}/resources/risks/${namespace}`);
    if (response.status !== 200) throw new Error(`risks of ${namespace}: HTTP ${response.status}`);
    const report = (await response.json()) as { evaluated: boolean; pending: number; workloads: RiskEntry[] };
    settled &&= report.evaluated && report.pending === 0;
    for (const workload of report.workloads)
      for (const finding of workload.findings)
        findings.push(`${workload.kind}/${workload.namespace}/${workload.name} ${finding.name}`);
  }
  return { settled, findings: findings.sort() };
}

function forewarnFindings(
  stored: readonly KubernetesObject[],
  manifests: readonly KubernetesObject[],
): string[] {
  const { index } = indexObjects(stored);
  return manifests
    .flatMap((manifest) =>
      rolloutVerdicts(index, keepWorkload(manifest))
        .filter(({ verdict }) => verdict.verdict === 'violates')
        .map(
          ({ constraint, verdict }) =>
            `${workloadKey(manifest)} ${checkedEntry(constraint, verdict, manifest, { level: 'full', namespace: String(manifest.metadata?.namespace) }).name}`,
        ),
    )
    .sort();
}

/** The server's answers as pairs: every policy it names violates; the others Forewarn lists pass. */
function serverPairs(
  answers: ReadonlyMap<string, ServerAnswer>,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnPair>>,
): PairVerdicts {
  const pairs: PairVerdicts = new Map();
  for (const [workload, answer] of answers) {
    for (const policy of answer.warnedBy) setPair(pairs, policy, workload, 'violates');
    for (const [policy, byWorkload] of forewarn)
      if (byWorkload.has(workload) && !answer.warnedBy.has(policy))
        setPair(pairs, policy, workload, 'passes');
  }
  return pairs;
}

function gatorPairs(
  violations: ReadonlyMap<string, ReadonlySet<string>>,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnPair>>,
): PairVerdicts {
  const pairs: PairVerdicts = new Map();
  for (const [constraint, workloadsViolating] of violations)
    for (const workload of workloadsViolating) setPair(pairs, constraint, workload, 'violates');
  for (const [constraint, byWorkload] of forewarn)
    for (const workload of byWorkload.keys())
      if (!violations.get(constraint)?.has(workload)) setPair(pairs, constraint, workload, 'passes');
  return pairs;
}

/** Switches every binding to Warn and every Pod Security label to `warn`: one dry-run names all. */
async function switchToWarnings(bindings: readonly KubernetesObject[]): Promise<void> {
  for (const binding of bindings) {
    const result = await started().kubectl([
      'patch',
      'validatingadmissionpolicybinding',
      String(binding.metadata?.name),
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { validationActions: ['Warn'] } }),
    ]);
    if (result.code !== 0) throw new Error(`patching ${String(binding.metadata?.name)}: ${result.stderr}`);
  }
  for (const namespace of NAMESPACES) {
    const level = POD_SECURITY_LEVELS[namespace];
    if (!level) continue;
    const result = await started().kubectl([
      'label',
      'namespace',
      namespace,
      'pod-security.kubernetes.io/enforce-',
      `pod-security.kubernetes.io/warn=${level}`,
    ]);
    if (result.code !== 0) throw new Error(`relabelling ${namespace}: ${result.stderr}`);
  }
}

const privilegedProbe = (namespace: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'enforcement-probe', namespace },
  spec: { containers: [{ name: 'probe', image: 'busybox:1.36', securityContext: { privileged: true } }] },
});

const testStarted = Date.now();
/** Progress on stderr (jest holds console output until the end): which step a slow run is in. */
const progress = (step: string) =>
  process.stderr.write(`[risks-agreement ${Math.round((Date.now() - testStarted) / 1000)}s] ${step}\n`);

function readAllowList(): AllowedDifference[] {
  const parsed = parse(readFileSync(ALLOW_LIST, 'utf8')) as { differences?: AllowedDifference[] | null };
  return parsed.differences ?? [];
}

describe('workloads at risk against Kyverno, gator and the API server', () => {
  it('agrees on every (workload, policy) pair both decide and decides at least 95%', async () => {
    if (KYVERNO === '' || GATOR === '')
      throw new Error('FOREWARN_KYVERNO_BIN and FOREWARN_GATOR_BIN must be set: run test/fidelity/run.sh');
    requireBuiltEntries();
    const opa = opaBinary();
    regoEngine.configure(opa);
    workDirectory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-risks-fidelity-'));
    cluster = await startCluster();

    progress('the cluster is up; applying the workloads');
    // 1. The workloads run.
    await applyAll(namespaces(false));
    for (const namespace of NAMESPACES)
      await waitFor(
        async () =>
          (await started().kubectl(['get', 'serviceaccount', 'default', '-n', namespace])).code === 0,
        60_000,
        { description: `default ServiceAccount of ${namespace}` },
      );
    await applyAll(workloads());
    const crdResult = await started().kubectl(['apply', '-f', '-'], { stdin: crds() });
    expect(crdResult.code).toBe(0);
    await started().kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);

    controller = launchController(started(), {
      kubeconfig: started().kubeconfigPath,
      detailLevel: 'full',
      extraArgs: ['--api-auth', 'none', '--opa-path', opa],
    });
    const { api } = await controllerReady(controller);

    progress('controller ready; applying the policies');
    // 2. The policies are tightened after them.
    const vaps = admissionPolicies();
    await applyAll([...vaps, ...kyvernoPolicies(), ...gatekeeperTemplates()]);
    await applyAll(gatekeeperConstraints());
    await applyAll(namespaces(true));
    await waitUntilEnforced(
      started(),
      (['shop', 'payments'] as const).map((namespace) => ({
        description: `Pod Security enforced in ${namespace}`,
        object: privilegedProbe(namespace),
        inForce: rejectedWith(podSecurityDenial(POD_SECURITY_LEVELS[namespace] ?? '')),
      })),
    );

    progress('policies enforced; reading the inventory');
    // 3. Forewarn: the controller's risks, and the same evaluation with every verdict kept.
    const manifests = await readInventory(started(), NAMESPACES);
    const stored = [
      ...(await getJson(['namespaces', ...NAMESPACES])),
      ...(await getJson(['validatingadmissionpolicies,validatingadmissionpolicybindings'])),
      ...(await getJson(['clusterpolicies.kyverno.io,policies.kyverno.io', '-A'])),
      ...(await getJson(['constrainttemplates.templates.gatekeeper.sh'])),
      ...(
        await Promise.all(
          [...new Set(gatekeeperConstraints().map((constraint) => String(constraint.kind)))].map((kind) =>
            getJson([`${constraintPlural(kind)}.constraints.gatekeeper.sh`]),
          ),
        )
      ).flat(),
    ];
    // The first pass starts the Rego templates' compilation.
    forewarnFindings(stored, manifests);
    await regoEngine.settled();
    const expected = forewarnFindings(stored, manifests);
    let seen: string[] = [];
    await waitFor(
      async () => {
        const risks = await controllerRisks(api);
        seen = risks.findings;
        return risks.settled && JSON.stringify(seen) === JSON.stringify(expected);
      },
      180_000,
      { description: 'the controller at risk exactly as its evaluation of the stored objects says' },
    ).catch(() => undefined);
    expect(seen).toEqual(expected);
    const forewarn = forewarnVerdicts(stored, manifests);

    progress('the controller agrees with its evaluation; asking Kyverno');
    // 4. The engines.
    const kyverno = await kyvernoVerdicts(
      KYVERNO,
      kyvernoPolicies(),
      manifests,
      path.join(workDirectory, 'kyverno'),
    );
    progress('asking gator');
    const gatekeeperObjects = [...gatekeeperTemplates(), ...gatekeeperConstraints()];
    const gator = gatorPairs(
      await gatorViolations(
        GATOR,
        gatekeeperObjects,
        namespaces(true),
        manifests,
        path.join(workDirectory, 'gator'),
      ),
      forewarn.get('gatekeeper') ?? new Map(),
    );
    progress('asking the API server (Deny, enforce)');
    // The server as it is (Deny, enforce): the workloads it would reject on their rollout.
    const rollouts = async () =>
      new Map(
        await mapConcurrently(
          manifests,
          4,
          async (manifest) => [workloadKey(manifest), await serverRollout(started(), manifest)] as const,
        ),
      );
    const rejected = await rollouts();
    progress('switching to the warning form');
    // The copy in warning form: every policy a rollout fails, in one dry-run.
    await switchToWarnings(vaps.filter((object) => object.kind === 'ValidatingAdmissionPolicyBinding'));
    await waitUntilEnforced(started(), []);
    await waitFor(
      async () => (await serverRollout(started(), privilegedProbe('payments'))).warnedBy.has('psa'),
      60_000,
      { description: 'Pod Security warnings in payments' },
    );
    progress('asking the API server (warnings)');
    const warned = await rollouts();
    const server = serverPairs(warned, forewarn.get('api-server') ?? new Map());

    progress('comparing');
    // 5. Per pair, per engine.
    const allowed = readAllowList();
    const comparisons: EngineComparison[] = [
      comparePairs('Kyverno CLI (kyverno apply)', 'kyverno', kyverno, forewarn.get('kyverno'), allowed),
      comparePairs('gator test', 'gatekeeper', gator, forewarn.get('gatekeeper'), allowed),
      comparePairs(
        'API server (VAP, Pod Security)',
        'api-server',
        server,
        forewarn.get('api-server'),
        allowed,
      ),
    ];
    // The set at risk of rejection by the server: rejected by a dry-run exactly when Forewarn says so.
    const atRiskDifferences = [...rejected].flatMap(([workload, answer]) => {
      const rejecting = [...(forewarn.get('api-server') ?? new Map<string, Map<string, ForewarnPair>>())]
        .filter(([, byWorkload]) => byWorkload.get(workload)?.rejects)
        .map(([policy]) => policy);
      const agrees = answer.rejectedBy ? rejecting.includes(answer.rejectedBy) : rejecting.length === 0;
      return agrees
        ? []
        : [
            `${workload}: server ${answer.rejectedBy ?? 'admits'}, Forewarn rejects by [${rejecting.join(', ')}]`,
          ];
    });
    const rejectedCount = [...rejected.values()].filter((answer) => answer.rejectedBy).length;
    console.log(
      [
        `Workloads at risk against the engines (kube-apiserver ${started().kubernetesVersion}; ${manifests.length} workloads in ${NAMESPACES.length} namespaces):`,
        formatTable(comparisons),
        `  rejected on their rollout by the API server (Deny bindings, enforce labels): ${rejectedCount} workloads, ${atRiskDifferences.length} differences from Forewarn`,
        ...comparisons.flatMap((comparison) =>
          comparison.disagreements.map((line) => `  disagreement: ${line}`),
        ),
        ...comparisons.flatMap((comparison) =>
          comparison.undecided.map((line) => `  Forewarn undecided: ${line}`),
        ),
        ...comparisons.flatMap((comparison) => comparison.allowed.map((line) => `  allowed: ${line}`)),
        ...atRiskDifferences.map((line) => `  at-risk difference: ${line}`),
      ].join('\n'),
    );
    for (const comparison of comparisons) {
      expect(comparison.disagreements).toEqual([]);
      expect(comparison.bothDecided).toBeGreaterThan(0);
      expect(comparison.forewarnDecided / comparison.engineDecided).toBeGreaterThanOrEqual(DECIDED_TARGET);
    }
    expect(atRiskDifferences).toEqual([]);
    expect(rejectedCount).toBeGreaterThan(0);
  });
});
