// The state and the helpers of the forewarn e2e run (forewarn.test.ts): one cluster, the controller
// and the webhook as their own ServiceAccounts, and the kubectl calls the steps make. The tests run in
// order and share this state: `run` holds what an earlier step started for the later ones.
import { copyFile, mkdtemp, readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import {
  asJsonObject,
  ControllerApi,
  ManagedProcess,
  requireBuiltEntries,
  webhookEntry,
  type JsonObject,
  type ReportEntry,
} from './forewarn-support';
import { controllerReady, launchController } from './controller-process';
import {
  deploymentManifest,
  webhookConfigurationName,
  webhookEntryName,
  webhookNamespace,
  webhookSecretName,
} from './forewarn-manifests';
import { errorMessage } from '../../services/model/error-message';
import { authorizationErrors, type IgnoredWindow } from './forewarn-identities';

export const RESCAN_INTERVAL_MS = 5_000;

interface RunState {
  cluster?: Cluster;
  controller?: ManagedProcess;
  webhook?: ManagedProcess;
  controllerApi?: ControllerApi;
  controllerPort: number;
  webhookPort: number;
  deploymentCounter: number;
  /** Kubeconfigs with TokenRequest tokens of the processes' own ServiceAccounts (step 2). */
  controllerKubeconfig: string;
  webhookKubeconfig: string;
  /** From the API server's SIGKILL until its /readyz answers again (test 6): denials there are its own. */
  apiServerOutages: IgnoredWindow[];
}

const tierStarted = Date.now();
const stepTimings: Array<{ step: string; ms: number; ok: boolean }> = [];
export const run: RunState = {
  controllerPort: 0,
  webhookPort: 0,
  deploymentCounter: 0,
  controllerKubeconfig: '',
  webhookKubeconfig: '',
  apiServerOutages: [],
};

export function say(message: string): void {
  console.log(`[forewarn e2e +${((Date.now() - tierStarted) / 1000).toFixed(1)}s] ${message}`);
}

export function requireCluster(): Cluster {
  if (!run.cluster) throw new Error('the cluster did not start (see beforeAll)');
  return run.cluster;
}

export function requireControllerApi(): ControllerApi {
  if (!run.controllerApi) throw new Error('the controller was not started (see the webhook/controller test)');
  return run.controllerApi;
}

function logTails(reason: string): void {
  const sections = [run.controller, run.webhook]
    .filter((process): process is ManagedProcess => process !== undefined)
    .map((process) => `----- ${process.name} (${process.logPath}), last lines -----\n${process.tail(40)}`);
  console.log(`[forewarn e2e] ${reason}\n${sections.join('\n')}`);
}

/** Runs one test body, records its duration, and prints the processes' log tails if it fails. */
export async function step(title: string, body: () => Promise<void>): Promise<void> {
  const started = Date.now();
  say(`step: ${title}`);
  try {
    await body();
    stepTimings.push({ step: title, ms: Date.now() - started, ok: true });
    say(`done: ${title} (${Date.now() - started} ms)`);
  } catch (error) {
    stepTimings.push({ step: title, ms: Date.now() - started, ok: false });
    logTails(`FAILED: ${title}: ${errorMessage(error)}`);
    throw error;
  }
}

export async function kubectlSucceeds(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  const result = await requireCluster().kubectl(args, { stdin });
  if (result.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
  }
  return result;
}

export async function kubectlJson(args: readonly string[]): Promise<JsonObject> {
  const result = await kubectlSucceeds([...args, '-o', 'json']);
  return asJsonObject(JSON.parse(result.stdout), `kubectl ${args.join(' ')}`);
}

/** `kubectl apply` until it succeeds: right after a CRD is installed kubectl's discovery may lag. */
export async function applyEventually(manifest: string, description: string): Promise<void> {
  await waitFor(
    async () => (await requireCluster().kubectl(['apply', '-f', '-'], { stdin: manifest })).code === 0,
    30_000,
    {
      description: `kubectl apply of ${description}`,
      intervalMs: 500,
    },
  );
}

export function field(object: JsonObject, ...keys: string[]): unknown {
  let current: unknown = object;
  for (const key of keys) current = asJsonObject(current, keys.join('.'))[key];
  return current;
}

export function decodeBase64(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} is empty`);
  return Buffer.from(value, 'base64').toString('utf8');
}

export interface TimedApply {
  result: ProcessResult;
  ms: number;
}

export async function applyDeployment(
  namespace: string,
  name: string,
  appLabel: string,
): Promise<TimedApply> {
  const started = Date.now();
  const result = await requireCluster().kubectl(['apply', '-f', '-'], {
    stdin: deploymentManifest(namespace, name, appLabel),
  });
  return { result, ms: Date.now() - started };
}

export function nextDeploymentName(prefix: string): string {
  run.deploymentCounter += 1;
  return `${prefix}-${run.deploymentCounter}`;
}

/** Names the report lists for NetworkPolicies (one entry per policy here: single direction). */
export function networkPolicyNames(entries: readonly ReportEntry[]): string[] {
  return entries
    .filter((entry) => entry.source === 'NetworkPolicy')
    .map((entry) => entry.name)
    .sort();
}

export async function kubectlNetworkPolicyNames(namespace: string): Promise<string[]> {
  const list = await kubectlJson(['-n', namespace, 'get', 'networkpolicies']);
  const items = list.items;
  if (!Array.isArray(items)) throw new Error('kubectl get networkpolicies: no items');
  return items.map((item: unknown) => String(field(asJsonObject(item, 'item'), 'metadata', 'name'))).sort();
}

/** The cluster's environment, with KUBECONFIG pointing at a ServiceAccount's kubeconfig. */
function identityEnv(kubeconfig: string): Record<string, string> {
  if (!kubeconfig) throw new Error('no ServiceAccount kubeconfig yet (see step 2)');
  return { ...requireCluster().env, KUBECONFIG: kubeconfig };
}

/** Starts the controller as its ServiceAccount and waits for its port and for /readyz (first sync done). */
export async function startControllerAndWait(port: number): Promise<ManagedProcess> {
  const started = launchController(requireCluster(), {
    kubeconfig: run.controllerKubeconfig,
    port,
    detailLevel: 'full',
    extraArgs: [
      '--rescan-interval',
      `${RESCAN_INTERVAL_MS / 1000}s`,
      '--missing-debounce',
      '0s',
      '--log-level',
      'info',
    ],
    env: identityEnv(run.controllerKubeconfig),
  });
  run.controller = started;
  try {
    const ready = await controllerReady(started);
    run.controllerPort = ready.port;
    run.controllerApi = ready.api;
  } catch (error) {
    // A watch the RBAC forbids keeps the first sync from finishing: name it instead of "timed out".
    const forbidden = await authorizationErrorsOf(started);
    throw new Error(
      `${errorMessage(error)}; ${forbidden.length} authorization errors in its log, first: ${forbidden[0] ?? 'none'}`,
    );
  }
  return started;
}

function startWebhook(): ManagedProcess {
  const running = requireCluster();
  return ManagedProcess.start(
    'webhook',
    path.join(running.dataDir, 'webhook.log'),
    webhookEntry,
    [
      '--addr',
      `127.0.0.1:${run.webhookPort}`,
      '--controller-url',
      `http://127.0.0.1:${run.controllerPort}`,
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
      run.webhookKubeconfig,
      '--log-level',
      'debug',
    ],
    identityEnv(run.webhookKubeconfig),
  );
}

/** Starts the webhook and waits until it serves the certificate from its Secret. */
export async function startWebhookAndWait(): Promise<{ process: ManagedProcess; settled: JsonObject }> {
  const started = startWebhook();
  run.webhook = started;
  const settled = await started.waitForLogLine(
    (line) => line.event === 'tls_secret_settled',
    60_000,
    'event tls_secret_settled',
  );
  return { process: started, settled };
}

/** The API server's last failed call of our webhook, e.g. a TLS error. */
export async function lastWebhookCallFailure(): Promise<string> {
  const log = await requireCluster().readApiServerLog();
  const failures = log
    .split('\n')
    .filter((line) => line.includes(`failed calling webhook "${webhookEntryName}"`));
  return failures.length === 0
    ? 'the API server logged no failed call of the webhook'
    : `the API server's last failed call of the webhook: ${failures[failures.length - 1]}`;
}

/**
 * GET over HTTPS trusting only `caPem`, checking the name 127.0.0.1 (which proves the IP SAN and the
 * CA): the status and the body.
 */
export function httpsGetTrusting(url: string, caPem: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(url, { ca: caPem, timeout: 5_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`GET ${url} timed out`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const VIOLATION_LINE =
  /^\[(CRITICAL|WARNING)\] (will be rejected|its pods will be rejected|will get a warning|will be recorded in the audit log): /;

/**
 * Warnings as the webhook orders them (DESIGN.md 7, issue 22): Critical before Warning, and within
 * each severity what the object violates (one at least) before what only applies to it.
 */
export function expectWebhookOrder(warnings: string[]): void {
  const critical = warnings.filter((line) => line.startsWith('[CRITICAL] '));
  const warning = warnings.filter((line) => line.startsWith('[WARNING] '));
  const isViolation = (line: string): boolean => VIOLATION_LINE.test(line);
  expect(warnings.filter(isViolation).length).toBeGreaterThan(0);
  expect(warnings).toEqual([...critical, ...warning]);
  for (const group of [critical, warning]) {
    const violationCount = group.filter(isViolation).length;
    expect(group.slice(0, violationCount).every(isViolation)).toBe(true);
  }
}

/**
 * How many reviews the webhook has handed to the controller whole, unparsed (issue 33), from its
 * `/metrics`: the real API server writes its reviews the way the webhook forwards.
 */
export async function reviewsForwardedWhole(webhookPort: number): Promise<number> {
  const url = `https://127.0.0.1:${webhookPort}/metrics`;
  const metrics = await httpsGetTrusting(url, (await readWebhookTrust()).secretCa);
  if (metrics.status !== 200) throw new Error(`GET ${url} answered ${metrics.status}`);
  return Number(/^forewarn_webhook_reviews_forwarded_total (\d+)$/m.exec(metrics.text)?.[1] ?? 0);
}

export async function readWebhookTrust(): Promise<{ secretCa: string; caBundles: string[] }> {
  const secret = await kubectlJson(['-n', webhookNamespace, 'get', 'secret', webhookSecretName]);
  const secretCa = decodeBase64(field(secret, 'data', 'ca.crt'), 'Secret ca.crt');
  const registration = await kubectlJson(['get', 'validatingwebhookconfiguration', webhookConfigurationName]);
  const webhooks = registration.webhooks;
  if (!Array.isArray(webhooks)) throw new Error('the registration has no webhooks');
  const caBundles = webhooks.map((entry: unknown) => {
    const bundle = field(asJsonObject(entry, 'webhook'), 'clientConfig', 'caBundle');
    return typeof bundle === 'string' && bundle !== '' ? decodeBase64(bundle, 'caBundle') : '';
  });
  return { secretCa, caBundles };
}

/** Authorization errors in a process's whole log (every run of it: the log is appended). */
export async function authorizationErrorsOf(process: ManagedProcess | undefined): Promise<string[]> {
  if (!process) throw new Error('the process was never started');
  return authorizationErrors(await readFile(process.logPath, 'utf8'), run.apiServerOutages);
}

/** Starts the cluster (beforeAll). */
export async function startRun(): Promise<void> {
  requireBuiltEntries();
  const started = Date.now();
  const cluster = await startCluster();
  run.cluster = cluster;
  say(`cluster ready at ${cluster.serverUrl} in ${Date.now() - started} ms (data dir ${cluster.dataDir})`);
}

/** Stops everything (afterAll), keeping the logs of a failed run, and prints the steps' durations. */
export async function finishRun(): Promise<void> {
  const { cluster, controller, webhook } = run;
  const failed = stepTimings.some((timing) => !timing.ok);
  await Promise.allSettled([controller?.stop('SIGTERM', 3_000), webhook?.stop('SIGTERM', 3_000)]);
  await Promise.allSettled([controller?.closeLog(), webhook?.closeLog()]);
  if (failed && cluster) {
    // The data dir goes with the cluster: keep the logs of a failed run.
    const kept = await mkdtemp(path.join(tmpdir(), 'forewarn-e2e-logs-'));
    const logs = [
      path.join(cluster.dataDir, 'controller.log'),
      path.join(cluster.dataDir, 'webhook.log'),
      cluster.apiServerLogPath,
    ];
    await Promise.allSettled(logs.map((log) => copyFile(log, path.join(kept, path.basename(log)))));
    console.log(`[forewarn e2e] some steps failed: controller, webhook and API server logs kept in ${kept}`);
  }
  await cluster?.stop();
  const summary = stepTimings
    .map(
      (timing) => `  ${timing.ok ? 'ok    ' : 'FAILED'} ${String(timing.ms).padStart(6)} ms  ${timing.step}`,
    )
    .join('\n');
  console.log(
    `[forewarn e2e] steps (total ${Date.now() - tierStarted} ms including cluster start and stop):\n${summary}`,
  );
}
