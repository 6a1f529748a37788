import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../services/controller/config';
import { startController, type RunningController } from '../../services/controller/runtime';
import { silentLogger } from '../../services/logging/logger';
import type { KubernetesApiTestServer } from './kubernetes-api-server';

// The whole controller in this process, watching the Kubernetes API test server through a
// kubeconfig of its own, its HTTP API on a loopback ephemeral port without authentication and no
// MCP: what the integration tests of the cluster path (risks, watch ordering) start alike.

export interface ControllerOnTestServer {
  controller: RunningController;
  /** Closes the controller and removes its kubeconfig (not the server: the test owns it). */
  stop(): Promise<void>;
}

export async function startControllerOnTestServer(
  server: KubernetesApiTestServer,
): Promise<ControllerOnTestServer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'forewarn-controller-'));
  const kubeconfig = path.join(directory, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  const config = parseControllerConfig(
    [
      '--kubeconfig',
      kubeconfig,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--mcp=false',
      '--api-auth',
      'none',
    ],
    {},
  );
  try {
    const controller = await startController(config, silentLogger());
    return {
      controller,
      stop: async () => {
        await controller.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}
