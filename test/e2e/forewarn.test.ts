// Forewarn end to end (issue 10): a real, current kube-apiserver with its controller-manager, the
// controller watching it, the webhook registered in it in self-signed mode, both running as their own
// ServiceAccounts with exactly the component's RBAC, and `kubectl apply` printing the warnings. One
// cluster for the whole file; the tests run in order and build on each other (see docs/e2e.md).
import { copyFile, mkdtemp, readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import {
  admissionWarnings,
  asJsonObject,
  controllerEntry,
  ControllerApi,
  ManagedProcess,
  millisecondsUntil,
  requireBuiltEntries,
  unusedLoopbackPort,
  webhookEntry,
  type JsonObject,
  type ReportEntry,
} from './forewarn-support';
import {
  apiOnlyPolicyName,
  cleanNamespace,
  constrainedNamespace,
  crdManifest,
  crdName,
  defaultDenyPolicyName,
  deploymentManifest,
  gatekeeperConstraintName,
  initialCrds,
  istioDenyPolicyName,
  kyvernoClusterPolicyName,
  kyvernoPolicyName,
  lateConstraintManifest,
  lateConstraintName,
  lateCrd,
  meshAndCniManifest,
  namespacesManifest,
  networkPoliciesManifest,
  networkPolicyManifest,
  policyEngineManifest,
  quotaName,
  quotaStatusUsed,
  resourceQuotaManifest,
  webhookConfigurationManifest,
  webhookConfigurationName,
  webhookEntryName,
  webhookNamespace,
  webhookSecretName,
  quotaUserPodManifest,
} from './forewarn-manifests';
import { errorMessage } from '../../services/model/error-message';
import {
  authorizationErrors,
  controllerServiceAccount,
  type IgnoredWindow,
  identitiesManifest,
  webhookServiceAccount,
} from './forewarn-identities';

const RESCAN_INTERVAL_MS = 5_000;
/** A change seen through a watch must reach the report within this (the "within a second"). */
const REPORT_LATENCY_LIMIT_MS = 1_000;
/** The webhook registration's timeoutSeconds is 5: a fail-open apply must finish well within 10 s. */
const FAIL_OPEN_APPLY_LIMIT_MS = 10_000;
/** A warning about what the admitted object itself violates (`POST /api/v1/admission-check`). */
const VIOLATION_LINE =
  /^\[(CRITICAL|WARNING)\] (will be rejected|its pods will be rejected|will get a warning|will be recorded in the audit log): /;
/** The processes' ServiceAccount tokens outlive the whole file. */
const TOKEN_LIFETIME_SECONDS = 2 * 60 * 60;

const tierStarted = Date.now();
const stepTimings: Array<{ step: string; ms: number; ok: boolean }> = [];
let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let webhook: ManagedProcess | undefined;
let controllerApi: ControllerApi | undefined;
let controllerPort = 0;
let webhookPort = 0;
let deploymentCounter = 0;
/** Kubeconfigs with TokenRequest tokens of the processes' own ServiceAccounts (step 2). */
let controllerKubeconfig = '';
let webhookKubeconfig = '';
/** From the API server's SIGKILL until its /readyz answers again (test 6): denials there are its own. */
const apiServerOutages: IgnoredWindow[] = [];

function say(message: string): void {
  console.log(`[forewarn e2e +${((Date.now() - tierStarted) / 1000).toFixed(1)}s] ${message}`);
}

function requireCluster(): Cluster {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  return cluster;
}

function requireControllerApi(): ControllerApi {
  if (!controllerApi) throw new Error('the controller was not started (see the webhook/controller test)');
  return controllerApi;
}

function logTails(reason: string): void {
  const sections = [controller, webhook]
    .filter((process): process is ManagedProcess => process !== undefined)
    .map((process) => `----- ${process.name} (${process.logPath}), last lines -----\n${process.tail(40)}`);
  console.log(`[forewarn e2e] ${reason}\n${sections.join('\n')}`);
}

/** Runs one test body, records its duration, and prints the processes' log tails if it fails. */
async function step(title: string, body: () => Promise<void>): Promise<void> {
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

async function kubectlSucceeds(args: readonly string[], stdin?: string): Promise<ProcessResult> {
  const result = await requireCluster().kubectl(args, { stdin });
  if (result.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
  }
  return result;
}

async function kubectlJson(args: readonly string[]): Promise<JsonObject> {
  const result = await kubectlSucceeds([...args, '-o', 'json']);
  return asJsonObject(JSON.parse(result.stdout), `kubectl ${args.join(' ')}`);
}

/** `kubectl apply` until it succeeds: right after a CRD is installed kubectl's discovery may lag. */
async function applyEventually(manifest: string, description: string): Promise<void> {
  await waitFor(
    async () => (await requireCluster().kubectl(['apply', '-f', '-'], { stdin: manifest })).code === 0,
    30_000,
    {
      description: `kubectl apply of ${description}`,
      intervalMs: 500,
    },
  );
}

function field(object: JsonObject, ...keys: string[]): unknown {
  let current: unknown = object;
  for (const key of keys) current = asJsonObject(current, keys.join('.'))[key];
  return current;
}

function decodeBase64(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} is empty`);
  return Buffer.from(value, 'base64').toString('utf8');
}

interface TimedApply {
  result: ProcessResult;
  ms: number;
}

async function applyDeployment(namespace: string, name: string, appLabel: string): Promise<TimedApply> {
  const started = Date.now();
  const result = await requireCluster().kubectl(['apply', '-f', '-'], {
    stdin: deploymentManifest(namespace, name, appLabel),
  });
  return { result, ms: Date.now() - started };
}

function nextDeploymentName(prefix: string): string {
  deploymentCounter += 1;
  return `${prefix}-${deploymentCounter}`;
}

/** Names the report lists for NetworkPolicies (one entry per policy here: single direction). */
function networkPolicyNames(entries: readonly ReportEntry[]): string[] {
  return entries
    .filter((entry) => entry.source === 'NetworkPolicy')
    .map((entry) => entry.name)
    .sort();
}

async function kubectlNetworkPolicyNames(namespace: string): Promise<string[]> {
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

function startController(port: number): ManagedProcess {
  const running = requireCluster();
  return ManagedProcess.start(
    'controller',
    path.join(running.dataDir, 'controller.log'),
    controllerEntry,
    [
      '--kubeconfig',
      controllerKubeconfig,
      '--port',
      String(port),
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--detail-level',
      'full',
      '--rescan-interval',
      `${RESCAN_INTERVAL_MS / 1000}s`,
      '--missing-debounce',
      '0s',
      '--log-level',
      'info',
    ],
    identityEnv(controllerKubeconfig),
  );
}

/** Starts the controller and waits for its port and for /readyz (first sync done). */
async function startControllerAndWait(port: number): Promise<ManagedProcess> {
  const started = startController(port);
  controller = started;
  const listening = await started.waitForLogLine(
    (line) => line.msg === 'HTTP API listening',
    30_000,
    '"HTTP API listening"',
  );
  if (typeof listening.port !== 'number')
    throw new Error(`controller logged no port: ${JSON.stringify(listening)}`);
  controllerPort = listening.port;
  controllerApi = new ControllerApi(`http://127.0.0.1:${controllerPort}`);
  try {
    await waitFor(() => requireControllerApi().isReady(), 60_000, {
      description: 'controller /readyz',
      intervalMs: 100,
    });
  } catch (error) {
    // A watch the RBAC forbids keeps the first sync from finishing: name it instead of "timed out".
    const forbidden = await authorizationErrorsOf(started);
    throw new Error(
      `${(error as Error).message}; ${forbidden.length} authorization errors in its log, first: ${forbidden[0] ?? 'none'}`,
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
      `127.0.0.1:${webhookPort}`,
      '--controller-url',
      `http://127.0.0.1:${controllerPort}`,
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
      webhookKubeconfig,
      '--log-level',
      'debug',
    ],
    identityEnv(webhookKubeconfig),
  );
}

/** Starts the webhook and waits until it serves the certificate from its Secret. */
async function startWebhookAndWait(): Promise<{ process: ManagedProcess; settled: JsonObject }> {
  const started = startWebhook();
  webhook = started;
  const settled = await started.waitForLogLine(
    (line) => line.event === 'tls_secret_settled',
    60_000,
    'event tls_secret_settled',
  );
  return { process: started, settled };
}

/** The API server's last failed call of our webhook, e.g. a TLS error. */
async function lastWebhookCallFailure(): Promise<string> {
  const log = await requireCluster().readApiServerLog();
  const failures = log
    .split('\n')
    .filter((line) => line.includes(`failed calling webhook "${webhookEntryName}"`));
  return failures.length === 0
    ? 'the API server logged no failed call of the webhook'
    : `the API server's last failed call of the webhook: ${failures[failures.length - 1]}`;
}

/** GET over HTTPS trusting only `caPem`, checking the name 127.0.0.1: proves the IP SAN and the CA. */
function httpsStatusTrusting(url: string, caPem: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(url, { ca: caPem, timeout: 5_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`GET ${url} timed out`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function readWebhookTrust(): Promise<{ secretCa: string; caBundles: string[] }> {
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

beforeAll(async () => {
  requireBuiltEntries();
  const started = Date.now();
  cluster = await startCluster();
  say(`cluster ready at ${cluster.serverUrl} in ${Date.now() - started} ms (data dir ${cluster.dataDir})`);
});

afterAll(async () => {
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
});

test('1. CRDs, labelled namespaces, policies of every kind, a quota at 93 % and workloads are installed with kubectl', () =>
  step('install CRDs, namespaces, policies, quota status, workloads', async () => {
    await kubectlSucceeds(['apply', '-f', '-'], initialCrds.map(crdManifest).join('---'));
    await kubectlSucceeds([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      ...initialCrds.map((crd) => `customresourcedefinition/${crdName(crd)}`),
    ]);
    await kubectlSucceeds(['apply', '-f', '-'], namespacesManifest);
    await kubectlSucceeds(['apply', '-f', '-'], networkPoliciesManifest + '---' + resourceQuotaManifest);

    // Real usage: a Pod holding 3810Mi of memory limits; the controller-manager's quota controller
    // counts it. (Pods need the namespace's `default` ServiceAccount, created a moment later.)
    await applyEventually(quotaUserPodManifest, 'the Pod that uses the quota');
    await waitFor(
      async () => {
        const quota = await kubectlJson(['-n', constrainedNamespace, 'get', 'resourcequota', quotaName]);
        return field(quota, 'status', 'used', 'limits.memory') === quotaStatusUsed['limits.memory'];
      },
      30_000,
      { description: 'the quota controller to count the Pod', intervalMs: 250 },
    );

    await applyEventually(policyEngineManifest, 'the Gatekeeper constraint and the Kyverno policies');
    await applyEventually(meshAndCniManifest, 'the Istio and Cilium policies');
    await kubectlSucceeds(
      ['apply', '-f', '-'],
      deploymentManifest(constrainedNamespace, 'existing-api', 'api') +
        '---' +
        deploymentManifest(cleanNamespace, 'existing-app', 'app'),
    );

    const reread = await kubectlJson(['-n', constrainedNamespace, 'get', 'resourcequota', quotaName]);
    expect(field(reread, 'status', 'used', 'limits.memory')).toBe('3810Mi');
    const namespace = await kubectlJson(['get', 'namespace', constrainedNamespace]);
    expect(field(namespace, 'metadata', 'labels', 'forewarn.dev/tier')).toBe('constrained');
    await kubectlSucceeds(['get', 'k8srequiredlabels.constraints.gatekeeper.sh', gatekeeperConstraintName]);
    await kubectlSucceeds(['get', 'clusterpolicies.kyverno.io', kyvernoClusterPolicyName]);
    await kubectlSucceeds(['-n', constrainedNamespace, 'get', 'policies.kyverno.io', kyvernoPolicyName]);
    await kubectlSucceeds([
      '-n',
      constrainedNamespace,
      'get',
      'authorizationpolicies.security.istio.io',
      istioDenyPolicyName,
    ]);
    say(
      `installed ${initialCrds.length} CRDs, namespaces ${constrainedNamespace}/${cleanNamespace}/${webhookNamespace}, policies, quota at 93 %`,
    );
  }));

test('2. the webhook (self-signed) created its TLS Secret and injected the CA bundle into its registration', () =>
  step('start controller and webhook; Secret and CA bundle', async () => {
    webhookPort = await unusedLoopbackPort();
    await kubectlSucceeds(['apply', '-f', '-'], webhookConfigurationManifest(webhookPort));
    await kubectlSucceeds(
      ['apply', '-f', '-'],
      identitiesManifest({
        namespace: webhookNamespace,
        tlsSecretName: webhookSecretName,
        webhookConfigurationName,
      }),
    );
    controllerKubeconfig = await requireCluster().serviceAccountKubeconfig(
      webhookNamespace,
      controllerServiceAccount,
      TOKEN_LIFETIME_SECONDS,
    );
    webhookKubeconfig = await requireCluster().serviceAccountKubeconfig(
      webhookNamespace,
      webhookServiceAccount,
      TOKEN_LIFETIME_SECONDS,
    );
    const controllerStarted = Date.now();
    await startControllerAndWait(0);
    say(`controller ready on port ${controllerPort} in ${Date.now() - controllerStarted} ms`);

    const webhookStarted = Date.now();
    const { settled } = await startWebhookAndWait();
    say(
      `webhook on port ${webhookPort} settled its Secret (action ${String(settled.action)}) in ${Date.now() - webhookStarted} ms`,
    );
    expect(settled.action).toBe('created');

    const trust = await waitFor(
      async () => {
        const read = await readWebhookTrust();
        return read.caBundles.length > 0 && read.caBundles.every((bundle) => bundle === read.secretCa)
          ? read
          : null;
      },
      30_000,
      { description: 'caBundle injected and equal to the Secret ca.crt', intervalMs: 250 },
    );
    expect(trust.secretCa).toContain('BEGIN CERTIFICATE');
    const secret = await kubectlJson(['-n', webhookNamespace, 'get', 'secret', webhookSecretName]);
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(decodeBase64(field(secret, 'data', 'tls.crt'), 'tls.crt')).toContain('BEGIN CERTIFICATE');
    expect(decodeBase64(field(secret, 'data', 'tls.key'), 'tls.key')).toContain('PRIVATE KEY');
    // The served certificate is trusted through that CA under the name 127.0.0.1 (IP SAN).
    expect(await httpsStatusTrusting(`https://127.0.0.1:${webhookPort}/readyz`, trust.secretCa)).toBe(200);
    say(
      `CA bundle injected into ${webhookConfigurationName} in ${Date.now() - webhookStarted} ms after the webhook start`,
    );
  }));

/** Authorization errors in a process's whole log (every run of it: the log is appended). */
async function authorizationErrorsOf(process: ManagedProcess | undefined): Promise<string[]> {
  if (!process) throw new Error('the process was never started');
  return authorizationErrors(await readFile(process.logPath, 'utf8'), apiServerOutages);
}

test("2b. controller and webhook, as their own ServiceAccounts with the component's RBAC, log no 403 and are healthy", () =>
  step('least-privilege identities: no authorization errors', async () => {
    const api = requireControllerApi();
    // The controller's first list/watch of every kind it watches has happened (it is ready); give a
    // failing watch one retry, then read the health and both logs.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const health = await api.health();
    const controllerErrors = await authorizationErrorsOf(controller);
    const webhookErrors = await authorizationErrorsOf(webhook);
    say(
      `controller health ${health.status}; authorization errors: controller ${controllerErrors.length}, webhook ${webhookErrors.length}`,
    );
    expect(controllerErrors.slice(0, 5)).toEqual([]);
    expect(webhookErrors.slice(0, 5)).toEqual([]);
    expect(health.status).toBe('healthy');
  }));

let shopWarnings: string[] = [];

test('3. kubectl apply in the constrained namespace prints [CRITICAL] and [WARNING] lines; the clean namespace gets none', () =>
  step('kubectl apply prints the warnings', async () => {
    // The API server picks the registration up asynchronously: wait until an apply shows warnings.
    const warmupStarted = Date.now();
    try {
      await waitFor(
        async () => {
          const { result } = await applyDeployment(
            constrainedNamespace,
            nextDeploymentName('warmup'),
            'warmup',
          );
          return (
            result.code === 0 &&
            admissionWarnings(result.stderr).some((line) => line.startsWith('[CRITICAL] '))
          );
        },
        30_000,
        { description: 'the first warned apply', intervalMs: 300 },
      );
    } catch (error) {
      // Say why the API server could not use the webhook (TLS, connection) instead of only "timed out".
      throw new Error(`${errorMessage(error)}; ${await lastWebhookCallFailure()}`);
    }
    say(`first warned apply after ${Date.now() - warmupStarted} ms`);

    const { result, ms } = await applyDeployment(constrainedNamespace, 'web', 'web');
    say(
      `kubectl apply deployment ${constrainedNamespace}/web (${ms} ms) printed:\n${result.stderr.trimEnd()}`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('deployment.apps/web created');
    shopWarnings = admissionWarnings(result.stderr);
    for (const line of shopWarnings) expect(line).toMatch(/^\[(CRITICAL|WARNING)\] \S/);
    const critical = shopWarnings.filter((line) => line.startsWith('[CRITICAL] '));
    const warning = shopWarnings.filter((line) => line.startsWith('[WARNING] '));
    expect(critical.length).toBeGreaterThan(0);
    expect(warning.length).toBeGreaterThan(0);
    // As the webhook orders them (DESIGN.md 7b): what this Deployment violates first, then what
    // applies to it; Critical before Warning within each.
    const isViolation = (line: string): boolean => VIOLATION_LINE.test(line);
    const violations = shopWarnings.filter(isViolation);
    const applying = shopWarnings.filter((line) => !isViolation(line));
    expect(violations.length).toBeGreaterThan(0);
    expect(shopWarnings).toEqual([...violations, ...applying]);
    for (const group of [violations, applying]) {
      const criticalCount = group.filter((line) => line.startsWith('[CRITICAL] ')).length;
      expect(group.slice(0, criticalCount).every((line) => line.startsWith('[CRITICAL] '))).toBe(true);
    }

    const criticalText = critical.join('\n');
    // The quota rejects this Deployment's pods (its container sets no CPU request).
    expect(criticalText).toMatch(/its pods will be rejected: .*\(ResourceQuota "[^"]*compute"\)/);
    expect(criticalText).toContain(`constraint "${gatekeeperConstraintName}" rejects`);
    expect(criticalText).toContain(`"${kyvernoClusterPolicyName}"`);
    expect(criticalText).toContain(`AuthorizationPolicy "${istioDenyPolicyName}"`);
    const warningText = warning.join('\n');
    expect(warningText).toMatch(
      new RegExp(`NetworkPolicy "[^"]*${defaultDenyPolicyName}" denies all ingress traffic`),
    );
    expect(warningText).toContain(`"${kyvernoPolicyName}"`);

    const deployment = await kubectlJson(['-n', constrainedNamespace, 'get', 'deployment', 'web']);
    expect(field(deployment, 'metadata', 'name')).toBe('web');

    const clean = await applyDeployment(cleanNamespace, 'web', 'web');
    say(
      `kubectl apply deployment ${cleanNamespace}/web (${clean.ms} ms): ${clean.result.stdout.trim()}; stderr ${JSON.stringify(clean.result.stderr)}`,
    );
    expect(clean.result.code).toBe(0);
    expect(clean.result.stdout).toContain('deployment.apps/web created');
    expect(clean.result.stderr).not.toContain('Warning:');
  }));

test('3b. the query carries labels and resource: a NetworkPolicy selecting app=api warns app=api, not app=web', () =>
  step('label-scoped warnings', async () => {
    expect(shopWarnings.join('\n')).not.toContain(apiOnlyPolicyName);
    const { result } = await applyDeployment(constrainedNamespace, 'api', 'api');
    expect(result.code).toBe(0);
    const apiWarnings = admissionWarnings(result.stderr);
    say(`app=api got ${apiWarnings.length} warnings, app=web got ${shopWarnings.length}`);
    expect(
      apiWarnings.some((line) => line.startsWith('[WARNING] ') && line.includes(apiOnlyPolicyName)),
    ).toBe(true);
    // The Istio DENY policy selects app=web only: the api Deployment is not warned about it.
    expect(apiWarnings.join('\n')).not.toContain(istioDenyPolicyName);
  }));

test('4a. creating, changing and deleting a NetworkPolicy shows in /resources/reports within a second', () =>
  step('NetworkPolicy create/change/delete latency', async () => {
    const api = requireControllerApi();
    const name = 'latency-probe';
    const entryOf = (entries: readonly ReportEntry[]): ReportEntry | undefined =>
      entries.find((entry) => entry.source === 'NetworkPolicy' && entry.name === name);
    const report = (): Promise<ReportEntry[]> => api.report(constrainedNamespace);

    await kubectlSucceeds(['apply', '-f', '-'], networkPolicyManifest(name, constrainedNamespace, false));
    const created = await millisecondsUntil(
      report,
      (entries) => entryOf(entries)?.effect === 'deny',
      5_000,
      Date.now(),
      'created NetworkPolicy in the report',
    );

    await kubectlSucceeds(['apply', '-f', '-'], networkPolicyManifest(name, constrainedNamespace, true));
    const changed = await millisecondsUntil(
      report,
      (entries) => entryOf(entries)?.effect === 'restrict',
      5_000,
      Date.now(),
      'changed NetworkPolicy in the report',
    );

    await kubectlSucceeds(['-n', constrainedNamespace, 'delete', 'networkpolicy', name]);
    const deleted = await millisecondsUntil(
      report,
      (entries) => entryOf(entries) === undefined,
      5_000,
      Date.now(),
      'deleted NetworkPolicy gone from the report',
    );

    say(
      `report latency after kubectl returned: create ${created} ms, change ${changed} ms, delete ${deleted} ms`,
    );
    expect(created).toBeLessThan(REPORT_LATENCY_LIMIT_MS);
    expect(changed).toBeLessThan(REPORT_LATENCY_LIMIT_MS);
    expect(deleted).toBeLessThan(REPORT_LATENCY_LIMIT_MS);
  }));

test('4b. a CRD installed during the run is watched by its adapter at the next rescan', () =>
  step('late CRD enables its kind', async () => {
    const api = requireControllerApi();
    const before = await api.health();
    const watchedBefore = before.adapters.policyengine?.watchedResources ?? -1;
    const capabilitiesBefore = await api.capabilities();
    expect(capabilitiesBefore.adapters).toContain('policyengine');

    await kubectlSucceeds(['apply', '-f', '-'], crdManifest(lateCrd));
    await kubectlSucceeds([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      `customresourcedefinition/${crdName(lateCrd)}`,
    ]);
    const established = Date.now();
    await applyEventually(lateConstraintManifest, `a ${lateCrd.kind} constraint`);

    const seen = await millisecondsUntil(
      () => api.report(constrainedNamespace),
      (entries) => entries.some((entry) => entry.name === lateConstraintName),
      RESCAN_INTERVAL_MS + 10_000,
      established,
      `${lateCrd.kind} constraint in the report`,
      100,
    );
    const after = await api.health();
    const capabilitiesAfter = await api.capabilities();
    say(
      `${lateCrd.kind} watched ${seen} ms after its CRD was Established; policyengine watched_resources ${watchedBefore} -> ${after.adapters.policyengine?.watchedResources}; lastScan ${capabilitiesBefore.lastScan} -> ${capabilitiesAfter.lastScan}`,
    );
    expect(after.adapters.policyengine?.enabled).toBe(true);
    expect(after.adapters.policyengine?.watchedResources).toBe(watchedBefore + 1);
    expect(Date.parse(capabilitiesAfter.lastScan)).toBeGreaterThan(Date.parse(capabilitiesBefore.lastScan));
    expect(Date.parse(capabilitiesAfter.lastScan)).toBeGreaterThanOrEqual(established - 1_000);
    expect(seen).toBeLessThan(RESCAN_INTERVAL_MS + 5_000);
    const report = await api.report(constrainedNamespace);
    expect(report.find((entry) => entry.name === lateConstraintName)?.severity).toBe('Warning');
  }));

test('5a. with the webhook process killed (SIGKILL), kubectl apply still succeeds within the timeout', () =>
  step('webhook killed: fail open', async () => {
    const running = webhook;
    if (!running) throw new Error('the webhook is not running');
    const exit = await running.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    const name = nextDeploymentName('while-webhook-down');
    const { result, ms } = await applyDeployment(constrainedNamespace, name, 'web');
    say(`kubectl apply with the webhook killed: exit ${result.code} in ${ms} ms`);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`deployment.apps/${name} created`);
    expect(ms).toBeLessThan(FAIL_OPEN_APPLY_LIMIT_MS);
    expect(admissionWarnings(result.stderr)).toEqual([]);
    // The API server really called the webhook and failed open.
    await waitFor(
      async () => {
        const log = await requireCluster().readApiServerLog();
        return log
          .split('\n')
          .some(
            (line) =>
              line.includes(`failing open ${webhookEntryName}`) &&
              line.includes(`127.0.0.1:${webhookPort}`) &&
              line.includes('connection refused'),
          );
      },
      10_000,
      { description: 'the API server log to show the webhook failing open' },
    );
  }));

test('5b. with the controller killed, the restarted webhook still allows, with no warnings', () =>
  step('controller killed: webhook allows without warnings', async () => {
    const { secretCa: caBefore } = await readWebhookTrust();
    await webhook?.closeLog();
    const { settled } = await startWebhookAndWait();
    expect(settled.action).toBe('reused');
    expect((await readWebhookTrust()).secretCa).toBe(caBefore);
    // Restarted, it warns again (the API server reconnects to it).
    await waitFor(
      async () => {
        const { result } = await applyDeployment(
          constrainedNamespace,
          nextDeploymentName('after-webhook-restart'),
          'web',
        );
        return result.code === 0 && admissionWarnings(result.stderr).length > 0;
      },
      30_000,
      { description: 'warnings again after the webhook restart', intervalMs: 300 },
    );

    const runningController = controller;
    if (!runningController) throw new Error('the controller is not running');
    expect((await runningController.stop('SIGKILL')).signal).toBe('SIGKILL');
    const name = nextDeploymentName('while-controller-down');
    const { result, ms } = await applyDeployment(constrainedNamespace, name, 'web');
    say(
      `kubectl apply with the controller killed: exit ${result.code} in ${ms} ms, stderr ${JSON.stringify(result.stderr)}`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`deployment.apps/${name} created`);
    expect(result.stderr).not.toContain('Warning:');
    // The webhook was consulted: it logged the failed controller query for this very Deployment.
    const failure = await webhook?.waitForLogLine(
      (line) => line.event === 'controller_query_failed' && line.name === name,
      10_000,
      `controller_query_failed for ${name}`,
    );
    expect(failure?.reason).toBe('unreachable');

    // Back to normal for the next test: the controller on the same port the webhook queries.
    await controller?.closeLog();
    await startControllerAndWait(controllerPort);
    say(`controller restarted on port ${controllerPort}`);
  }));

test('6. API server SIGKILL and restart: the controller reports unhealthy/degraded, then converges with no lost delete', () =>
  step('API server killed and restarted', async () => {
    const api = requireControllerApi();
    const running = requireCluster();
    await kubectlSucceeds(
      ['apply', '-f', '-'],
      networkPolicyManifest('doomed', constrainedNamespace, false) +
        '---' +
        networkPolicyManifest('survivor', constrainedNamespace, false),
    );
    await waitFor(
      async () => {
        const names = networkPolicyNames(await api.report(constrainedNamespace));
        return names.includes('doomed') && names.includes('survivor');
      },
      10_000,
      { description: 'doomed and survivor in the report', intervalMs: 50 },
    );
    expect((await api.health()).status).toBe('healthy');

    const killed = Date.now();
    await running.killApiServer();
    const statusesSeen = new Set<string>();
    const noticed = await millisecondsUntil(
      () => api.health(),
      (health) => {
        statusesSeen.add(health.status);
        return health.status === 'unhealthy' || health.status === 'degraded';
      },
      30_000,
      killed,
      'controller health unhealthy or degraded while the API server is down',
      100,
    );
    say(`API server killed; controller health went ${[...statusesSeen].join(' -> ')} after ${noticed} ms`);

    const restartStarted = Date.now();
    await running.startApiServer();
    apiServerOutages.push({ from: killed, to: Date.now() });
    say(`API server restarted in ${Date.now() - restartStarted} ms`);
    // Delete and create before the controller's watches are back (its health still not healthy).
    const healthAtDelete = (await api.health()).status;
    await kubectlSucceeds(['-n', constrainedNamespace, 'delete', 'networkpolicy', 'doomed']);
    await kubectlSucceeds(
      ['apply', '-f', '-'],
      networkPolicyManifest('born-after-restart', constrainedNamespace, false),
    );
    const changedAt = Date.now();
    say(`deleted doomed, created born-after-restart (controller health at the delete: ${healthAtDelete})`);

    const expected = await kubectlNetworkPolicyNames(constrainedNamespace);
    expect(expected).not.toContain('doomed');
    expect(expected).toContain('born-after-restart');
    const converged = await millisecondsUntil(
      async () => ({
        names: networkPolicyNames(await api.report(constrainedNamespace)),
        status: (await api.health()).status,
      }),
      (state) => state.status === 'healthy' && JSON.stringify(state.names) === JSON.stringify(expected),
      60_000,
      changedAt,
      `report NetworkPolicies equal to kubectl's ${JSON.stringify(expected)} and health healthy`,
      100,
    );
    say(
      `controller converged ${converged} ms after the changes (${expected.length} NetworkPolicies, healthy)`,
    );
    // Still equal a moment later: no stale object resurfaces.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(networkPolicyNames(await api.report(constrainedNamespace))).toEqual(
      await kubectlNetworkPolicyNames(constrainedNamespace),
    );
  }));

test('7. over the whole run (restarts included; not while the API server was down or starting), neither process logged an authorization error', () =>
  step('no authorization errors over the whole run', async () => {
    expect((await authorizationErrorsOf(controller)).slice(0, 5)).toEqual([]);
    expect((await authorizationErrorsOf(webhook)).slice(0, 5)).toEqual([]);
  }));
