// The controller and the webhook as local processes with the identities the component created: each
// gets a kubeconfig holding a TokenRequest token of its ServiceAccount, so every request it makes goes
// through the component's RBAC.
import path from 'node:path';
import type { Cluster } from '../e2e/harness';
import { waitFor } from '../e2e/harness';
import {
  ControllerApi,
  ManagedProcess,
  controllerEntry,
  webhookEntry,
  type JsonObject,
} from '../e2e/forewarn-support';

/** Names the stack's component (`forewarn` in forewarn-system) gives its objects. */
export const STACK_NAMES = {
  namespace: 'forewarn-system',
  controller: 'forewarn-controller',
  webhook: 'forewarn-webhook',
  registration: 'forewarn-webhook',
  tlsSecret: 'forewarn-webhook-tls',
} as const;

export interface RunningController {
  process: ManagedProcess;
  api: ControllerApi;
  url: string;
}

export async function startControllerAs(cluster: Cluster, logDir: string): Promise<RunningController> {
  const kubeconfig = await cluster.serviceAccountKubeconfig(STACK_NAMES.namespace, STACK_NAMES.controller);
  const started = ManagedProcess.start(
    'controller',
    path.join(logDir, 'controller.log'),
    controllerEntry,
    [
      `--kubeconfig=${kubeconfig}`,
      '--address=127.0.0.1',
      '--port=0',
      '--mcp=false',
      '--detail-level=full',
      `--own-webhook=${STACK_NAMES.registration}`,
      '--missing-debounce=0s',
    ],
    {},
  );
  return stoppedOnFailure(started, async () => {
    const listening = await started.waitForLogLine(
      (line) => line.msg === 'HTTP API listening',
      30_000,
      'listening',
    );
    const url = `http://127.0.0.1:${String(listening.port)}`;
    const api = new ControllerApi(url);
    await waitFor(() => api.isReady(), 90_000, { description: 'controller /readyz', intervalMs: 200 });
    return { process: started, api, url };
  });
}

/** Runs `wait`; when it fails, stops the process (so jest can exit) and adds its last log lines. */
async function stoppedOnFailure<T>(started: ManagedProcess, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    await started.stop('SIGKILL');
    throw new Error(
      `${(error as Error).message}\n----- ${started.name}, last lines -----\n${started.tail(30)}`,
    );
  }
}

/** Log lines of a process that report an authorization failure (HTTP 403 / Forbidden). */
export function authorizationErrors(process: ManagedProcess): JsonObject[] {
  return process.logLines((line) => /\b403\b|forbidden/i.test(JSON.stringify(line)));
}

export interface WebhookOptions {
  port: number;
  controllerUrl: string;
  /** Adds 127.0.0.1 to the certificate's names, so the API server can call it by URL. */
  loopbackSan: boolean;
  logName: string;
}

/** Starts the webhook as its ServiceAccount and waits until its Secret settled; returns the settle line. */
export async function startWebhookAs(
  cluster: Cluster,
  logDir: string,
  options: WebhookOptions,
): Promise<{ process: ManagedProcess; settled: JsonObject }> {
  const kubeconfig = await cluster.serviceAccountKubeconfig(STACK_NAMES.namespace, STACK_NAMES.webhook);
  const started = ManagedProcess.start(
    'webhook',
    path.join(logDir, options.logName),
    webhookEntry,
    [
      `--kubeconfig=${kubeconfig}`,
      `--addr=127.0.0.1:${options.port}`,
      `--controller-url=${options.controllerUrl}`,
      `--namespace=${STACK_NAMES.namespace}`,
      '--self-signed=true',
      `--webhook-name=${STACK_NAMES.registration}`,
      `--service-name=${STACK_NAMES.webhook}`,
      `--secret-name=${STACK_NAMES.tlsSecret}`,
      ...(options.loopbackSan ? ['--extra-san=127.0.0.1'] : []),
      '--log-level=debug',
    ],
    {},
  );
  const settled = await stoppedOnFailure(started, () =>
    started.waitForLogLine((line) => line.event === 'tls_secret_settled', 60_000, 'event tls_secret_settled'),
  );
  return { process: started, settled };
}
