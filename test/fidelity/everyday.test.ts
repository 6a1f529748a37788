import path from 'node:path';
import { startCluster, waitFor, type Cluster, type ProcessResult } from '../e2e/harness';
import {
  admissionWarnings,
  asJsonObject,
  getJson,
  ManagedProcess,
  requireBuiltEntries,
  unusedLoopbackPort,
  webhookEntry,
  type CheckedEntry,
} from '../e2e/forewarn-support';
import { controllerReady, launchController } from '../e2e/controller-process';
import { bindingDenial, rejectedWith, waitUntilEnforced, admittedByServer } from '../e2e/enforcement';
import {
  webhookConfigurationManifest,
  webhookConfigurationName,
  webhookNamespace,
  webhookSecretName,
} from '../e2e/forewarn-manifests';
import { compareQuantities, parseQuantity } from '../../services/model/quantity';
import { changes, NAMESPACE, standing, type Manifest } from './everyday/changes';

// Everyday changes on the real API server (issue 31): each change of test/fidelity/everyday is
// applied for real (`kubectl apply`, create then updates) on kube-apiserver v1.34.4 with Forewarn's
// controller watching it and Forewarn's webhook registered by URL. Before each apply, Forewarn is
// asked as `forewarn check` asks (no operation: the controller finds whether the object exists).
// Every "will be rejected" must be rejected and every rejection predicted; the warning lines the
// webhook prints on each compliant apply are counted and printed.

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let webhook: ManagedProcess | undefined;
let controllerUrl = '';

afterAll(async () => {
  await Promise.allSettled([controller?.stop('SIGTERM', 3_000), webhook?.stop('SIGTERM', 3_000)]);
  await cluster?.stop();
});

const started = (): Cluster => {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  return cluster;
};

async function kubectl(args: string[], object?: unknown): Promise<ProcessResult> {
  return started().kubectl(args, object === undefined ? {} : { stdin: JSON.stringify(object) });
}

async function kubectlOk(args: string[], stdin?: string): Promise<void> {
  const result = await started().kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
}

/** What `forewarn check` asks: no operation, the controller decides CREATE or UPDATE. */
async function prediction(object: Manifest): Promise<CheckedEntry[]> {
  const response = await fetch(`${controllerUrl}/api/v1/admission-check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ object }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = asJsonObject(await response.json(), 'admission-check answer');
  if (response.status !== 200) throw new Error(`admission-check: HTTP ${response.status}`);
  return body.constraints as CheckedEntry[];
}

/** The quota's `status.used` as the server has it and as the controller's report shows it agree. */
async function controllerSeesQuota(): Promise<boolean> {
  const stored = JSON.parse(
    (await kubectl(['get', 'resourcequota', 'team-quota', '-n', NAMESPACE, '-o', 'json'])).stdout,
  ) as {
    status?: { used?: Record<string, string> };
  };
  const used = stored.status?.used ?? {};
  const view = await getJson(`${controllerUrl}/resources/constraints/${NAMESPACE}/team-quota`, 5_000);
  const metrics = (asJsonObject(view.body, 'quota view').metrics ?? {}) as Record<string, { used: string }>;
  return Object.entries(used).every(
    ([resource, value]) =>
      metrics[resource] !== undefined &&
      compareQuantities(parseQuantity(metrics[resource].used), parseQuantity(value)) === 0,
  );
}

async function startWebhook(port: number): Promise<ManagedProcess> {
  const running = started();
  const process = ManagedProcess.start(
    'webhook',
    path.join(running.dataDir, 'webhook.log'),
    webhookEntry,
    [
      '--addr',
      `127.0.0.1:${port}`,
      '--controller-url',
      controllerUrl,
      '--namespace',
      webhookNamespace,
      '--self-signed=true',
      '--webhook-name',
      webhookConfigurationName,
      '--service-name',
      'forewarn-webhook',
      '--secret-name',
      webhookSecretName,
      '--extra-san',
      '127.0.0.1',
      '--kubeconfig',
      running.kubeconfigPath,
    ],
    {},
  );
  await process.waitForLogLine((line) => line.event === 'tls_secret_settled', 60_000, 'tls_secret_settled');
  return process;
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  await kubectlOk(['apply', '-f', '-'], standing.map((object) => JSON.stringify(object)).join('\n'));
  await kubectlOk(['create', 'namespace', webhookNamespace]);
  // The controller-manager publishes kube-root-ca.crt, which the quota counts: wait for it.
  await waitFor(
    async () => (await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', NAMESPACE])).code === 0,
    60_000,
    { description: 'kube-root-ca.crt in the namespace' },
  );
  const overCap = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'probe', namespace: NAMESPACE },
    spec: {
      replicas: 7,
      selector: { matchLabels: { app: 'probe' } },
      template: {
        metadata: { labels: { app: 'probe' } },
        spec: { containers: [{ name: 'probe', image: 'probe' }] },
      },
    },
  };
  await waitUntilEnforced(started(), [
    {
      description: 'replica-cap rejects 7 replicas',
      object: overCap,
      inForce: rejectedWith(bindingDenial('replica-cap-binding')),
    },
    {
      description: 'the quota has its status (a ConfigMap is admitted)',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe', namespace: NAMESPACE } },
      inForce: admittedByServer,
    },
    {
      description: 'the LimitRange default limit makes a 700m request invalid',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', namespace: NAMESPACE },
        spec: { containers: [{ name: 'probe', image: 'probe', resources: { requests: { cpu: '700m' } } }] },
      },
      inForce: rejectedWith(/must be less than or equal to cpu limit/),
    },
  ]);
  controller = launchController(started(), {
    kubeconfig: started().kubeconfigPath,
    detailLevel: 'full',
    extraArgs: ['--api-auth', 'none'],
  });
  const ready = await controllerReady(controller);
  controllerUrl = ready.api.baseUrl;
  const webhookPort = await unusedLoopbackPort();
  await kubectlOk(['apply', '-f', '-'], webhookConfigurationManifest(webhookPort));
  webhook = await startWebhook(webhookPort);
  // Forewarn's webhook answers once the server calls it: a Deployment whose pods exceed the quota is
  // admitted with Forewarn's warning.
  const hungry = {
    ...overCap,
    spec: {
      ...overCap.spec,
      replicas: 1,
      template: {
        metadata: { labels: { app: 'probe' } },
        spec: { containers: [{ name: 'probe', image: 'probe', resources: { requests: { cpu: '5' } } }] },
      },
    },
  };
  await waitFor(
    async () => {
      const result = await kubectl(['create', '--dry-run=server', '-f', '-'], hungry);
      return result.code === 0 && admissionWarnings(result.stderr).some((line) => /quota/.test(line));
    },
    60_000,
    { description: "Forewarn's webhook warning on a dry run" },
  );
});

interface Outcome {
  change: string;
  kind: string;
  predicted: 'rejected' | 'admitted' | 'undecided';
  server: 'rejected' | 'admitted';
  warnings: string[];
  compliant: boolean;
  because?: string;
}

/** Rejected: a denying constraint is violated for the object itself (not only its pods). */
function predicted(entries: readonly CheckedEntry[]): Outcome['predicted'] {
  if (entries.some((entry) => entry.verdict === 'violates' && entry.summary.startsWith('will be rejected')))
    return 'rejected';
  const denying = entries.filter((entry) => entry.effect === 'deny' || entry.effect === 'limit');
  return denying.some((entry) => entry.verdict === 'unknown') ? 'undecided' : 'admitted';
}

describe('everyday changes on the real API server', () => {
  it('rejects every change Forewarn says will be rejected, and no other', async () => {
    const outcomes: Outcome[] = [];
    for (const change of changes) {
      // The quota's usage moves with every admitted object: compare from the same figures.
      await waitFor(controllerSeesQuota, 30_000, {
        description: `the controller's quota figures (${change.description})`,
      });
      const entries = await prediction(change.object);
      const applied = await kubectl(['apply', '-f', '-'], change.object);
      outcomes.push({
        change: change.description,
        kind: String(change.object.kind),
        predicted: predicted(entries),
        server: applied.code === 0 ? 'admitted' : 'rejected',
        warnings: admissionWarnings(applied.stderr),
        compliant: change.compliant,
        ...(applied.code === 0 ? {} : { because: applied.stderr.trim() }),
      });
    }
    const decided = outcomes.filter((outcome) => outcome.predicted !== 'undecided');
    const mismatches = decided.filter((outcome) => outcome.predicted !== outcome.server);
    const compliant = outcomes.filter((outcome) => outcome.compliant && outcome.server === 'admitted');
    console.log(
      [
        `everyday changes on kube-apiserver ${started().kubernetesVersion}: ${outcomes.length} applies, ` +
          `${decided.length} decided, ${outcomes.filter((outcome) => outcome.server === 'rejected').length} rejected by the server, ${mismatches.length} disagreements`,
        ...outcomes.map(
          (outcome) =>
            `  ${outcome.server.padEnd(8)} predicted ${outcome.predicted.padEnd(10)} ${outcome.warnings.length} warning line(s)  ${outcome.change}`,
        ),
        `warning lines per compliant apply: ${compliant.map((outcome) => outcome.warnings.length).join(', ')}`,
        ...compliant.flatMap((outcome) => outcome.warnings.map((line) => `    ${outcome.change}: ${line}`)),
      ].join('\n'),
    );
    expect(mismatches).toEqual([]);
    // Undecided only where the controller cannot tell whether the object exists (it does not read
    // ConfigMaps): an edit at the quota's count limit may be an update, which is not counted.
    expect(
      outcomes.filter((outcome) => outcome.predicted === 'undecided').map((outcome) => outcome.kind),
    ).toEqual(outcomes.filter((outcome) => outcome.predicted === 'undecided').map(() => 'ConfigMap'));
    expect(decided.length).toBeGreaterThanOrEqual(outcomes.length - 2);
    // The corpus exercises both answers, and its compliant changes are admitted.
    expect(outcomes.filter((outcome) => outcome.server === 'rejected').length).toBeGreaterThan(0);
    expect(
      outcomes.filter((outcome) => outcome.compliant).map((outcome) => [outcome.change, outcome.server]),
    ).toEqual(changes.filter((change) => change.compliant).map((change) => [change.description, 'admitted']));
  });
});
