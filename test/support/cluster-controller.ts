// The controller's real runtime (HTTP API on a free loopback port, no MCP endpoint) watching the
// Kubernetes API test server through a ClusterSource, with the reflector timings a test picks.
import { parseControllerConfig } from '../../services/controller/config';
import { startController, type RunningController } from '../../services/controller/runtime';
import {
  ClusterSource,
  type ClusterSourceOptions,
} from '../../services/controller/sources/cluster/cluster-source';
import { silentLogger } from '../../services/logging/logger';
import type { KubernetesApiTestServer } from './kubernetes-api-server';

/** What a test may tune of the source; the rest is fixed (a rescan a minute, a silent logger). */
export type ClusterSourceTuning = Pick<ClusterSourceOptions, 'timing' | 'crdRescanDelayMs' | 'syncWaitMs'>;

export function startClusterController(
  server: KubernetesApiTestServer,
  tuning: ClusterSourceTuning,
): Promise<RunningController> {
  const config = parseControllerConfig(['--port', '0', '--address', '127.0.0.1', '--mcp=false'], {});
  return startController(config, silentLogger(), {
    source: (sink, registry, watchObserver) =>
      new ClusterSource({
        kubeConfig: server.kubeConfig(),
        sink,
        registry,
        logger: silentLogger(),
        rescanIntervalMs: 60_000,
        ...tuning,
        watchObserver,
      }),
  });
}
