// The deploy tier (docs/e2e.md, "Deploy tier"): `pulumi up` of the repository's stack for real, on a
// current kube-apiserver + controller-manager, then the controller and the webhook running as local
// processes with the ServiceAccounts, RBAC, Secret and registration the component created. The tests
// run in order on one cluster and one file backend; each step builds on the previous one.
import { appendFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { admissionWarnings, requireBuiltEntries, unusedLoopbackPort } from '../e2e/forewarn-support';
import {
  at,
  crdManifest,
  kubectlJson,
  kubectlOk,
  objectExists,
  stackProjectDirectory,
  watchedKindCrds,
} from './deploy-support';
import {
  STACK_NAMES,
  authorizationErrors,
  startControllerAs,
  startWebhookAs,
  type RunningController,
} from './forewarn-processes';
import { PulumiWorkspace, tail } from './pulumi-cli';
import { SHOP_MANIFEST, deploymentManifest } from './shop';
import { deployToolDirs, skipAwaitConfig, testNeedingProviders } from './tools';

const withProviders = testNeedingProviders('deploy.test.ts');

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

async function webhookTrust(): Promise<{ secretCa: string; secretData: unknown; caBundle: string }> {
  const secret = await kubectlJson(cluster, [
    '-n',
    STACK_NAMES.namespace,
    'get',
    'secret',
    STACK_NAMES.tlsSecret,
  ]);
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    STACK_NAMES.registration,
  ]);
  const webhooks = at(registration, 'webhooks');
  const first = Array.isArray(webhooks) ? webhooks[0] : undefined;
  return {
    secretCa: String(at(secret, 'data', 'ca.crt')),
    secretData: at(secret, 'data'),
    caBundle: String(at(first, 'clientConfig', 'caBundle') ?? ''),
  };
}

/** JSON patch of the registration's clientConfig: the one field this test changes (see docs/e2e.md). */
async function pointRegistrationAt(target: { url: string } | 'service'): Promise<void> {
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    STACK_NAMES.registration,
  ]);
  const clientConfig = {
    ...(at(registration, 'webhooks') as Array<Record<string, Record<string, unknown>>>)[0].clientConfig,
  };
  delete clientConfig.url;
  delete clientConfig.service;
  const replaced =
    target === 'service'
      ? {
          ...clientConfig,
          service: {
            name: STACK_NAMES.webhook,
            namespace: STACK_NAMES.namespace,
            path: '/validate',
            port: 443,
          },
        }
      : { ...clientConfig, url: target.url };
  const patch = JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig', value: replaced }]);
  await kubectlOk(cluster, [
    'patch',
    'validatingwebhookconfiguration',
    STACK_NAMES.registration,
    '--type=json',
    '-p',
    patch,
  ]);
}

beforeAll(async () => {
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
  const crds = watchedKindCrds();
  await kubectlOk(
    cluster,
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: crds.map(crdManifest) }),
  );
  await kubectlOk(cluster, [
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    ...crds.map((c) => `crd/${c.plural}.${c.group}`),
  ]);
  await kubectlOk(cluster, ['apply', '-f', '-'], SHOP_MANIFEST);
  console.log(`[deploy] work dir ${workDir} (pulumi log: ${pulumi.logPath})`);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.stop()));
  await cluster?.stop();
});

withProviders(
  'pulumi up of the repository stack (self-signed) creates the component in forewarn-system',
  async () => {
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
    const trust = await webhookTrust();
    expect(trust.caBundle).toBe(trust.secretCa);
  },
);

withProviders('a second preview shows no changes and a second up is a no-op', async () => {
  await pulumi.succeed(project, ['preview', '--expect-no-changes', '--stack', 'deploy']);
  const second = await pulumi.succeed(project, ['up', '--yes', '--expect-no-changes', '--stack', 'deploy']);
  expect(second.stdout).toMatch(/unchanged/);
});

withProviders(
  'the controller, as its ServiceAccount, becomes healthy with no authorization error',
  async () => {
    controller = await startControllerAs(cluster, workDir);
    processes.push(controller.process);
    const health = await waitFor(
      async () => {
        const report = await controller?.api.health();
        return report?.status === 'healthy' ? report : undefined;
      },
      60_000,
      { description: 'controller health "healthy"', intervalMs: 500 },
    );
    // Every kind it knows is served here (the CRDs above), so every adapter watches something.
    const idle = Object.entries(health.adapters).filter(
      ([, adapter]) => !adapter.enabled || adapter.watchedResources === 0,
    );
    expect(idle.map(([name, adapter]) => `${name}: ${adapter.reason ?? 'no watched resources'}`)).toEqual([]);
    expect(authorizationErrors(controller.process)).toEqual([]);
  },
);

withProviders('the webhook, as its ServiceAccount, reuses the Secret the component created', async () => {
  const before = await webhookTrust();
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
  expect(await webhookTrust()).toEqual(before);
});

withProviders(
  'after a forced rotation the webhook injects its new CA and kubectl apply prints warnings',
  async () => {
    const before = await webhookTrust();
    const port = await unusedLoopbackPort();
    // The API server has no route to a Service here: it calls the local webhook by URL instead.
    await pointRegistrationAt({ url: `https://127.0.0.1:${port}/validate` });
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
        const trust = await webhookTrust();
        return trust.caBundle === trust.secretCa && trust.secretCa !== before.secretCa ? trust : undefined;
      },
      30_000,
      { description: 'the new CA in the registration', intervalMs: 250 },
    );
    expect(rotated.secretData).not.toEqual(before.secretData);
    const warnings = await waitFor(
      async () => {
        const result = await cluster.kubectl(['apply', '-f', '-'], {
          stdin: deploymentManifest(`web-${Date.now()}`),
        });
        const found = admissionWarnings(result.stderr).filter((warning) => warning.includes('NetworkPolicy'));
        return result.code === 0 && found.length > 0 ? found : undefined;
      },
      60_000,
      { description: "Forewarn's warnings on kubectl apply in shop", intervalMs: 1_000 },
    );
    expect(warnings.join('\n')).toMatch(/default-deny-ingress/);
    expect(authorizationErrors(webhook)).toEqual([]);
    await webhook.stop('SIGTERM');
    await pointRegistrationAt('service');
  },
);

withProviders("pulumi up and refresh after the rotation keep the webhook's Secret and caBundle", async () => {
  const rotated = await webhookTrust();
  await pulumi.succeed(project, ['up', '--yes', '--stack', 'deploy']);
  expect(await webhookTrust()).toEqual(rotated);
  await pulumi.succeed(project, ['refresh', '--yes', '--stack', 'deploy']);
  await pulumi.succeed(project, ['up', '--yes', '--stack', 'deploy']);
  expect(await webhookTrust()).toEqual(rotated);
  await pulumi.succeed(project, ['preview', '--expect-no-changes', '--stack', 'deploy']);
});

withProviders(
  'managed mode creates the cert-manager Certificate and the inject-ca-from annotation',
  async () => {
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
    await pulumi.succeed(project, ['destroy', '--yes', '--stack', 'managed']);
    expect(await objectExists(cluster, ['validatingwebhookconfiguration', 'fw-managed-webhook'])).toBe(false);
  },
);

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

withProviders('pulumi destroy leaves nothing behind', async () => {
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
