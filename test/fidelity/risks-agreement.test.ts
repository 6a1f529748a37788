import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { regoEngine } from '../../services/controller/verdicts/gatekeeper/rego-engine';
import { opaBinary } from '../support/opa-binary';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { ControllerApi, ManagedProcess, requireBuiltEntries } from '../e2e/forewarn-support';
import { controllerReady, launchController } from '../e2e/controller-process';
import { podSecurityDenial, rejectedWith, waitUntilEnforced } from '../e2e/enforcement';
import {
  crds,
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
  workloadKey,
} from './risks/oracles';
import { comparePairs, formatTable, type EngineComparison } from './risks/comparison';
import {
  controllerRisks,
  forewarnFindings,
  forewarnVerdicts,
  gatorPairs,
  rejectionDifferences,
  serverPairs,
} from './risks/forewarn-side';

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

/** The cluster, the workloads running, the controller watching, then the policies tightened. */
async function prepareInventory(): Promise<{ api: ControllerApi; vaps: KubernetesObject[] }> {
  requireBuiltEntries();
  const opa = opaBinary();
  regoEngine.configure(opa);
  workDirectory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-risks-fidelity-'));
  cluster = await startCluster();
  progress('the cluster is up; applying the workloads');
  await applyAll(namespaces(false));
  for (const namespace of NAMESPACES)
    await waitFor(
      async () => (await started().kubectl(['get', 'serviceaccount', 'default', '-n', namespace])).code === 0,
      60_000,
      { description: `default ServiceAccount of ${namespace}` },
    );
  await applyAll(workloads());
  const crdResult = await started().kubectl(['apply', '-f', '-'], { stdin: crds() });
  if (crdResult.code !== 0) throw new Error(`applying the CRDs: ${crdResult.stderr}`);
  await started().kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
  controller = launchController(started(), {
    kubeconfig: started().kubeconfigPath,
    detailLevel: 'full',
    extraArgs: ['--api-auth', 'none', '--opa-path', opa],
  });
  const { api } = await controllerReady(controller);
  progress('controller ready; applying the policies');
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
  return { api, vaps };
}

/** The policy objects as the server stores them: what the controller indexes. */
async function storedPolicies(): Promise<KubernetesObject[]> {
  const constraintKinds = [...new Set(gatekeeperConstraints().map((constraint) => String(constraint.kind)))];
  return [
    ...(await getJson(['namespaces', ...NAMESPACES])),
    ...(await getJson(['validatingadmissionpolicies,validatingadmissionpolicybindings'])),
    ...(await getJson(['clusterpolicies.kyverno.io,policies.kyverno.io', '-A'])),
    ...(await getJson(['constrainttemplates.templates.gatekeeper.sh'])),
    ...(
      await Promise.all(
        constraintKinds.map((kind) => getJson([`${constraintPlural(kind)}.constraints.gatekeeper.sh`])),
      )
    ).flat(),
  ];
}

/**
 * The controller's risks, once they equal the same evaluation of the stored objects in this process
 * (which keeps every verdict, `unknown`s included, for the pairs).
 */
async function forewarnSide(api: ControllerApi, manifests: readonly KubernetesObject[]) {
  const stored = await storedPolicies();
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
  return forewarnVerdicts(stored, manifests);
}

/** Each workload's rollout through the server: as it is (Deny, enforce), then in warning form. */
async function askServer(manifests: readonly KubernetesObject[], vaps: readonly KubernetesObject[]) {
  const rollouts = async () =>
    new Map(
      await mapConcurrently(
        manifests,
        4,
        async (manifest) => [workloadKey(manifest), await serverRollout(started(), manifest)] as const,
      ),
    );
  progress('asking the API server (Deny, enforce)');
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
  return { rejected, warned: await rollouts() };
}

function printReport(
  workloadCount: number,
  comparisons: readonly EngineComparison[],
  rejectedCount: number,
  atRiskDifferences: readonly string[],
): void {
  const lines = (kind: string, pick: (comparison: EngineComparison) => string[]) =>
    comparisons.flatMap((comparison) => pick(comparison).map((line) => `  ${kind}: ${line}`));
  console.log(
    [
      `Workloads at risk against the engines (kube-apiserver ${started().kubernetesVersion}; ${workloadCount} workloads in ${NAMESPACES.length} namespaces):`,
      formatTable(comparisons),
      `  rejected on their rollout by the API server (Deny bindings, enforce labels): ${rejectedCount} workloads, ${atRiskDifferences.length} differences from Forewarn`,
      ...lines('disagreement', (comparison) => comparison.disagreements),
      ...lines('Forewarn undecided', (comparison) => comparison.undecided),
      ...lines('allowed', (comparison) => comparison.allowed),
      ...atRiskDifferences.map((line) => `  at-risk difference: ${line}`),
    ].join('\n'),
  );
}

describe('workloads at risk against Kyverno, gator and the API server', () => {
  it('agrees on every (workload, policy) pair both decide and decides at least 95%', async () => {
    if (KYVERNO === '' || GATOR === '')
      throw new Error('FOREWARN_KYVERNO_BIN and FOREWARN_GATOR_BIN must be set: run test/fidelity/run.sh');
    const { api, vaps } = await prepareInventory();
    progress('policies enforced; reading the inventory');
    const manifests = await readInventory(started(), NAMESPACES);
    const forewarn = await forewarnSide(api, manifests);

    progress('the controller agrees with its evaluation; asking Kyverno');
    const kyvernoDirectory = path.join(workDirectory, 'kyverno');
    const kyverno = await kyvernoVerdicts(KYVERNO, kyvernoPolicies(), manifests, kyvernoDirectory);
    progress('asking gator');
    const gatekeeperObjects = [...gatekeeperTemplates(), ...gatekeeperConstraints()];
    const gatorDirectory = path.join(workDirectory, 'gator');
    const violations = await gatorViolations(
      GATOR,
      gatekeeperObjects,
      namespaces(true),
      manifests,
      gatorDirectory,
    );
    const gator = gatorPairs(violations, forewarn.get('gatekeeper') ?? new Map());
    const { rejected, warned } = await askServer(manifests, vaps);
    const server = serverPairs(warned, forewarn.get('api-server') ?? new Map());

    progress('comparing');
    const allowed = readAllowList();
    const comparisons: EngineComparison[] = [
      comparePairs(
        'Kyverno CLI (kyverno apply)',
        'kyverno',
        kyverno,
        forewarn.get('kyverno'),
        allowed,
        'unlisted',
      ),
      comparePairs('gator test', 'gatekeeper', gator, forewarn.get('gatekeeper'), allowed),
      comparePairs(
        'API server (VAP, Pod Security)',
        'api-server',
        server,
        forewarn.get('api-server'),
        allowed,
      ),
    ];
    const atRiskDifferences = rejectionDifferences(rejected, forewarn.get('api-server') ?? new Map());
    const rejectedCount = [...rejected.values()].filter((answer) => answer.rejectedBy).length;
    printReport(manifests.length, comparisons, rejectedCount, atRiskDifferences);
    for (const comparison of comparisons) {
      expect(comparison.disagreements).toEqual([]);
      expect(comparison.bothDecided).toBeGreaterThan(0);
      expect(comparison.forewarnDecided / comparison.engineDecided).toBeGreaterThanOrEqual(DECIDED_TARGET);
    }
    expect(atRiskDifferences).toEqual([]);
    expect(rejectedCount).toBeGreaterThan(0);
  });
});
