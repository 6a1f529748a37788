// What both deploy-tier files check on the cluster once the component's objects are there (created
// by `pulumi up` in deploy.test.ts, applied as rendered in rendered.test.ts): the watched kinds and the
// shop installed first, the webhook's Secret and registration, the processes healthy as their own
// ServiceAccounts, and kubectl apply printing Forewarn's warnings.
import { waitFor, type Cluster } from '../e2e/harness';
import { admissionWarnings } from '../e2e/forewarn-support';
import { at, crdManifest, kubectlJson, kubectlOk, watchedKindCrds } from './deploy-support';
import {
  STACK_NAMES,
  authorizationErrors,
  startControllerAs,
  type RunningController,
} from './forewarn-processes';
import { OWNER_LABEL_MESSAGE, SHOP_MANIFEST, deploymentManifest } from './shop';

/** The CRDs of every watched kind (Established), then the shop namespace and its policies. */
export async function installWatchedKindsAndShop(cluster: Cluster): Promise<void> {
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
}

export interface WebhookTrust {
  secretCa: string;
  secretData: unknown;
  caBundle: string;
}

/** The webhook's TLS Secret and the caBundle of the registration's first webhook. */
export async function webhookTrust(cluster: Cluster): Promise<WebhookTrust> {
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

/** JSON patch of the registration's clientConfig: the one field the tests change (see docs/e2e.md). */
export async function pointRegistrationAt(
  cluster: Cluster,
  target: { url: string } | 'service',
): Promise<void> {
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

/**
 * Starts the controller as its ServiceAccount (added to `processes`, to stop) and expects it healthy, every adapter watching
 * something (every kind it knows is served: the CRDs above) and no authorization error.
 */
export async function expectControllerHealthyAs(
  cluster: Cluster,
  workDir: string,
  processes: Array<{ stop: () => Promise<unknown> }>,
): Promise<RunningController> {
  const controller = await startControllerAs(cluster, workDir);
  processes.push(controller.process);
  const health = await waitFor(
    async () => {
      const report = await controller.api.health();
      return report.status === 'healthy' ? report : undefined;
    },
    60_000,
    { description: 'controller health "healthy"', intervalMs: 500 },
  );
  const idle = Object.entries(health.adapters).filter(
    ([, adapter]) => !adapter.enabled || adapter.watchedResources === 0,
  );
  expect(idle.map(([name, adapter]) => `${name}: ${adapter.reason ?? 'no watched resources'}`)).toEqual([]);
  expect(authorizationErrors(controller.process)).toEqual([]);
  return controller;
}

/**
 * Applies new Deployments in shop until kubectl prints Forewarn's warning about the audited owner
 * label; the namespace's NetworkPolicy only applies and is never a warning (issue 31).
 */
export async function expectWarningsOnApply(cluster: Cluster): Promise<void> {
  const warnings = await waitFor(
    async () => {
      const result = await cluster.kubectl(['apply', '-f', '-'], {
        stdin: deploymentManifest(`web-${Date.now()}`),
      });
      const warnings = admissionWarnings(result.stderr);
      // The audited policy's message; its name shows only at `full` (issue 31's naming rule: an
      // audit-only policy does not name itself in the API server's answers).
      const found = warnings.filter((warning) => warning.includes(OWNER_LABEL_MESSAGE));
      return result.code === 0 && found.length > 0 ? warnings : undefined;
    },
    60_000,
    { description: "Forewarn's warnings on kubectl apply in shop", intervalMs: 1_000 },
  );
  expect(warnings.join('\n')).toMatch(/will be recorded in the audit log: .*need an owner label/);
  expect(warnings.join('\n')).not.toMatch(/default-deny-ingress/);
}
