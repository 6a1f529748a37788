// The deploy tier (docs/e2e.md, "Deploy tier"): `pulumi up` of the repository's stack for real, on a
// current kube-apiserver + controller-manager, then the controller and the webhook running as local
// processes with the ServiceAccounts, RBAC, Secret and registration the component created. The tests
// run in order on one cluster and one file backend; each step builds on the previous one.
import { appendFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { requireBuiltEntries, unusedLoopbackPort } from '../e2e/forewarn-support';
import {
  at,
  issueSecretAsCertManager,
  kubectlJson,
  kubectlOk,
  objectExists,
  stackProjectDirectory,
} from './deploy-support';
import {
  STACK_NAMES,
  authorizationErrors,
  startWebhookAs,
  type RunningController,
} from './forewarn-processes';
import { PulumiWorkspace, tail } from './pulumi-cli';
import {
  expectControllerHealthyAs,
  expectWarningsOnApply,
  installWatchedKindsAndShop,
  pointRegistrationAt,
  webhookTrust,
} from './component-checks';
import { deployToolDirs, requireDeployTools, skipAwaitConfig } from './tools';

let cluster: Cluster;
let workDir: string;
let pulumi: PulumiWorkspace;
let project: string;
let controller: RunningController | undefined;
const processes: Array<{ stop: () => Promise<unknown> }> = [];

/** `pulumi stack init` and the stack's configuration (YAML lines under `config:`). */
async function initStack(stack: string, configLines: readonly string[]): Promise<void> {
  await pulumi.succeed(project, ['stack', 'init', stack]);
  const lines = [...configLines, ...skipAwaitConfig()];
  if (lines.length > 0) {
    await appendFile(
      path.join(project, `Pulumi.${stack}.yaml`),
      `config:\n${lines.map((l) => `  ${l}`).join('\n')}\n`,
    );
  }
}

beforeAll(async () => {
  requireDeployTools();
  requireBuiltEntries();
  cluster = await startCluster();
  workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-'));
  pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: cluster.kubeconfigPath,
    binDirs: deployToolDirs(),
    passphrase: 'deploy-tier-passphrase',
  });
  await pulumi.init();
  project = await stackProjectDirectory(workDir);
  await installWatchedKindsAndShop(cluster);
  console.log(`[deploy] work dir ${workDir} (pulumi log: ${pulumi.logPath})`);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop()));
  await cluster?.stop();
});

test('pulumi up of the repository stack (self-signed) creates the component in forewarn-system', async () => {
  await initStack('deploy', []);
  await pulumi.succeed(project, ['up', '--yes', '--stack', 'deploy']);
  for (const object of [
    ['namespace', STACK_NAMES.namespace],
    ['clusterrole', STACK_NAMES.controller],
    ['clusterrolebinding', STACK_NAMES.webhook],
    ['validatingwebhookconfiguration', STACK_NAMES.registration],
    ['-n', STACK_NAMES.namespace, 'deployment', STACK_NAMES.controller],
    ['-n', STACK_NAMES.namespace, 'secret', STACK_NAMES.tlsSecret],
  ]) {
    expect({ object, exists: await objectExists(cluster, object) }).toEqual({ object, exists: true });
  }
  const trust = await webhookTrust(cluster);
  expect(trust.caBundle).toBe(trust.secretCa);
});

test('a second preview shows no changes and a second up is a no-op', async () => {
  await pulumi.succeed(project, ['preview', '--expect-no-changes', '--stack', 'deploy']);
  const second = await pulumi.succeed(project, ['up', '--yes', '--expect-no-changes', '--stack', 'deploy']);
  expect(second.stdout).toMatch(/unchanged/);
});

test('the controller, as its ServiceAccount, becomes healthy with no authorization error', async () => {
  controller = await expectControllerHealthyAs(cluster, workDir, processes);
});

test('the webhook, as its ServiceAccount, reuses the Secret the component created', async () => {
  const before = await webhookTrust(cluster);
  const { process: webhook, settled } = await startWebhookAs(cluster, workDir, {
    port: await unusedLoopbackPort(),
    controllerUrl: controller?.url ?? '',
    loopbackSan: false,
    logName: 'webhook-reuse.log',
  });
  processes.push(webhook);
  expect(settled.action).toBe('reused');
  await webhook.stop('SIGTERM');
  expect(authorizationErrors(webhook)).toEqual([]);
  expect(await webhookTrust(cluster)).toEqual(before);
});

test('after a forced rotation the webhook injects its new CA and kubectl apply prints warnings', async () => {
  const before = await webhookTrust(cluster);
  const port = await unusedLoopbackPort();
  // The API server has no route to a Service here: it calls the local webhook by URL instead.
  await pointRegistrationAt(cluster, { url: `https://127.0.0.1:${port}/validate` });
  const { process: webhook, settled } = await startWebhookAs(cluster, workDir, {
    port,
    controllerUrl: controller?.url ?? '',
    loopbackSan: true, // a name the component's certificate lacks: the webhook must rotate
    logName: 'webhook-rotated.log',
  });
  processes.push(webhook);
  expect(settled.action).toBe('rotated');
  const rotated = await waitFor(
    async () => {
      const trust = await webhookTrust(cluster);
      return trust.caBundle === trust.secretCa && trust.secretCa !== before.secretCa ? trust : undefined;
    },
    30_000,
    { description: 'the new CA in the registration', intervalMs: 250 },
  );
  expect(rotated.secretData).not.toEqual(before.secretData);
  await expectWarningsOnApply(cluster);
  expect(authorizationErrors(webhook)).toEqual([]);
  await webhook.stop('SIGTERM');
  await pointRegistrationAt(cluster, 'service');
});

test("pulumi up and refresh after the rotation keep the webhook's Secret and caBundle", async () => {
  const rotated = await webhookTrust(cluster);
  await pulumi.succeed(project, ['up', '--yes', '--stack', 'deploy']);
  expect(await webhookTrust(cluster)).toEqual(rotated);
  await pulumi.succeed(project, ['refresh', '--yes', '--stack', 'deploy']);
  await pulumi.succeed(project, ['up', '--yes', '--stack', 'deploy']);
  expect(await webhookTrust(cluster)).toEqual(rotated);
  await pulumi.succeed(project, ['preview', '--expect-no-changes', '--stack', 'deploy']);
});

test('managed mode creates the cert-manager Certificate and the inject-ca-from annotation', async () => {
  await initStack('managed', [
    'forewarn:name: fw-managed',
    'forewarn:namespace: fw-managed',
    'forewarn:admissionWebhook:',
    '  certManagement: managed',
    '  certIssuer: { issuerName: internal-ca, issuerKind: ClusterIssuer }',
  ]);
  const up = pulumi.run(project, ['up', '--yes', '--stack', 'managed']);
  // Play cert-manager: once the Certificate exists, mark it Ready (Pulumi waits for that condition).
  const certificateCreated = waitFor(
    () => objectExists(cluster, ['-n', 'fw-managed', 'certificate', 'fw-managed-webhook']),
    240_000,
    { description: 'Certificate fw-managed-webhook', intervalMs: 500 },
  );
  const early = await Promise.race([
    up,
    certificateCreated.then(
      () => undefined,
      () => undefined,
    ),
  ]);
  if (early && early.code !== 0)
    throw new Error(`pulumi up (managed) failed:\n${tail(early.stdout)}\n${tail(early.stderr)}`);
  await certificateCreated;
  // No cert-manager runs here: the test does its part, as cert-manager would on seeing the
  // Certificate: it issues the Secret the Certificate names (a CA-signed serving certificate, with
  // cert-manager's annotations), then reports the Certificate Ready.
  await issueSecretAsCertManager(cluster, {
    namespace: 'fw-managed',
    certificate: 'fw-managed-webhook',
    secretName: 'fw-managed-webhook-tls',
    serviceName: 'fw-managed-webhook',
    issuer: { name: 'internal-ca', kind: 'ClusterIssuer' },
  });
  const ready = {
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Issued', message: 'issued by the test' }],
    },
  };
  await kubectlOk(cluster, [
    '-n',
    'fw-managed',
    'patch',
    'certificate',
    'fw-managed-webhook',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(ready),
  ]);
  const result = await up;
  if (result.code !== 0)
    throw new Error(`pulumi up (managed) failed:\n${tail(result.stdout)}\n${tail(result.stderr)}`);
  const certificate = await kubectlJson(cluster, [
    '-n',
    'fw-managed',
    'get',
    'certificate',
    'fw-managed-webhook',
  ]);
  expect(() => new Certificate(certificate as never).validate()).not.toThrow();
  expect(at(certificate, 'spec', 'secretName')).toBe('fw-managed-webhook-tls');
  expect(at(certificate, 'spec', 'issuerRef')).toEqual({ name: 'internal-ca', kind: 'ClusterIssuer' });
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    'fw-managed-webhook',
  ]);
  expect(at(registration, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')).toBe(
    'fw-managed/fw-managed-webhook',
  );
  const issued = await kubectlJson(cluster, ['-n', 'fw-managed', 'get', 'secret', 'fw-managed-webhook-tls']);
  expect(at(issued, 'type')).toBe('kubernetes.io/tls');
  expect(Object.keys(at(issued, 'data') as object).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  await pulumi.succeed(project, ['destroy', '--yes', '--stack', 'managed']);
  expect(await objectExists(cluster, ['validatingwebhookconfiguration', 'fw-managed-webhook'])).toBe(false);
});

test("invalid stack configuration fails preview with the component's message and creates nothing", async () => {
  await initStack('invalid', [
    'forewarn:name: fw-invalid',
    'forewarn:namespace: fw-invalid',
    'forewarn:admissionWebhook: { failurePolicy: Fail, timeoutSeconds: 30 }',
  ]);
  const preview = await pulumi.run(project, ['preview', '--stack', 'invalid']);
  expect(preview.code).not.toBe(0);
  const output = preview.stdout + preview.stderr;
  expect(output).toMatch(/invalid arguments for Forewarn "fw-invalid"/);
  expect(output).toMatch(/failurePolicy/);
  expect(output).toMatch(/timeoutSeconds/);
  const up = await pulumi.run(project, ['up', '--yes', '--stack', 'invalid']);
  expect(up.code).not.toBe(0);
  expect(await objectExists(cluster, ['namespace', 'fw-invalid'])).toBe(false);
  expect(await objectExists(cluster, ['clusterrole', 'fw-invalid-controller'])).toBe(false);
});

test('pulumi destroy leaves nothing behind', async () => {
  await pulumi.succeed(project, ['destroy', '--yes', '--stack', 'deploy']);
  const selector = '-l=app.kubernetes.io/part-of=forewarn';
  for (const kind of ['clusterroles', 'clusterrolebindings', 'validatingwebhookconfigurations']) {
    expect({ kind, left: (await kubectlOk(cluster, ['get', kind, selector, '-o', 'name'])).trim() }).toEqual({
      kind,
      left: '',
    });
  }
  // The controller-manager finalizes the namespace (and with it every namespaced object).
  await waitFor(async () => !(await objectExists(cluster, ['namespace', STACK_NAMES.namespace])), 120_000, {
    description: `namespace ${STACK_NAMES.namespace} deleted`,
    intervalMs: 1_000,
  });
});
