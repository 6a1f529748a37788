// The controller as the e2e files start it: one place for its command line (loopback address, no MCP
// endpoint) and for "started" meaning its HTTP port logged and /readyz answering (first sync done).
import path from 'node:path';
import { waitFor, type Cluster } from './harness';
import { ControllerApi, controllerEntry, ManagedProcess } from './forewarn-support';

export interface ControllerLaunch {
  /** The kubeconfig the controller watches the cluster with (the admin's or a ServiceAccount's). */
  kubeconfig: string;
  /** 0 picks a free port; the port it really listens on comes from its log. */
  port?: number;
  detailLevel: 'full' | 'summary';
  /** Flags after the common ones (rescan interval, API authentication, log level, ...). */
  extraArgs?: readonly string[];
  /** The process environment (the controller's own, without the cluster's admin kubeconfig). */
  env?: Record<string, string>;
}

export interface ReadyController {
  port: number;
  api: ControllerApi;
}

/** Starts `dist/services/controller/main.js`, logging to `controller.log` in the cluster's data dir. */
export function launchController(cluster: Cluster, launch: ControllerLaunch): ManagedProcess {
  return ManagedProcess.start(
    'controller',
    path.join(cluster.dataDir, 'controller.log'),
    controllerEntry,
    [
      '--kubeconfig',
      launch.kubeconfig,
      '--port',
      String(launch.port ?? 0),
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--detail-level',
      launch.detailLevel,
      ...(launch.extraArgs ?? []),
    ],
    launch.env ?? {},
  );
}

/** Waits for the port the controller logs and then for its /readyz (its first sync is done). */
export async function controllerReady(controller: ManagedProcess): Promise<ReadyController> {
  const listening = await controller.waitForLogLine(
    (line) => line.msg === 'HTTP API listening',
    30_000,
    '"HTTP API listening"',
  );
  if (typeof listening.port !== 'number') {
    throw new Error(`controller logged no port: ${JSON.stringify(listening)}`);
  }
  const api = new ControllerApi(`http://127.0.0.1:${listening.port}`);
  await waitFor(() => api.isReady(), 60_000, { description: 'controller /readyz', intervalMs: 100 });
  return { port: listening.port, api };
}

/** The cluster and the controller a file's beforeAll started, or an error saying they did not start. */
export function requireStarted(
  cluster: Cluster | undefined,
  api: ControllerApi | undefined,
): { cluster: Cluster; api: ControllerApi } {
  if (!cluster || !api) throw new Error('the cluster or the controller did not start (see beforeAll)');
  return { cluster, api };
}
