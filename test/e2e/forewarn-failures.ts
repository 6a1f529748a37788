// The failure steps of the forewarn e2e run (forewarn.test.ts, tests 5a to 6): the webhook killed, the
// controller killed, the API server killed and restarted. Each runs after the steps before it, on the
// state they left in `run`.
import { waitFor } from './harness';
import { admissionWarnings, millisecondsUntil } from './forewarn-support';
import { constrainedNamespace, networkPolicyManifest, webhookEntryName } from './forewarn-manifests';
import {
  applyDeployment,
  kubectlNetworkPolicyNames,
  kubectlSucceeds,
  networkPolicyNames,
  nextDeploymentName,
  readWebhookTrust,
  requireCluster,
  requireControllerApi,
  run,
  say,
  startControllerAndWait,
  startWebhookAndWait,
} from './forewarn-run';

/** The webhook registration's timeoutSeconds is 5: a fail-open apply must finish well within 10 s. */
const FAIL_OPEN_APPLY_LIMIT_MS = 10_000;

/** Kills the webhook (SIGKILL): kubectl apply still succeeds, within the timeout, and the API server fails open. */
export async function webhookKilledFailsOpen(): Promise<void> {
  const running = run.webhook;
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
            line.includes(`127.0.0.1:${run.webhookPort}`) &&
            line.includes('connection refused'),
        );
    },
    10_000,
    { description: 'the API server log to show the webhook failing open' },
  );
}

/** Restarts the webhook (reusing its Secret), then kills the controller: the webhook allows, with no warnings. */
export async function controllerKilledWebhookAllows(): Promise<void> {
  const { secretCa: caBefore } = await readWebhookTrust();
  await run.webhook?.closeLog();
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

  const runningController = run.controller;
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
  const failure = await run.webhook?.waitForLogLine(
    (line) => line.event === 'controller_query_failed' && line.name === name,
    10_000,
    `controller_query_failed for ${name}`,
  );
  expect(failure?.reason).toBe('unreachable');

  // Back to normal for the next test: the controller on the same port the webhook queries.
  await run.controller?.closeLog();
  await startControllerAndWait(run.controllerPort);
  say(`controller restarted on port ${run.controllerPort}`);
}

/** Kills and restarts the API server: the controller reports unhealthy/degraded, then converges with no lost delete. */
export async function apiServerRestartConverges(): Promise<void> {
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
  run.apiServerOutages.push({ from: killed, to: Date.now() });
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
  say(`controller converged ${converged} ms after the changes (${expected.length} NetworkPolicies, healthy)`);
  // Still equal a moment later: no stale object resurfaces.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(networkPolicyNames(await api.report(constrainedNamespace))).toEqual(
    await kubectlNetworkPolicyNames(constrainedNamespace),
  );
}
