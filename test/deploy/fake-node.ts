// A node for Deployments to become Available on, without a kubelet: kube-scheduler binds the pods to a
// Node that kwok (sigs.k8s.io/kwok, built by build-tools.sh) keeps Ready, and kwok plays the kubelet
// for the pods bound to it (Running, Ready, a pod IP). The controller-manager the cluster already runs
// then marks ReplicaSets and Deployments available and fills the Services' endpoints, so Pulumi's
// await logic runs exactly as on a real cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import type { Cluster } from '../e2e/harness';
import { unusedLoopbackPort } from '../e2e/forewarn-support';
import { toolPath } from './tools';

export const FAKE_NODE_NAME = 'kwok-node-0';

export interface FakeNode {
  stop(): Promise<void>;
}

class BackgroundTool {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    binary: string,
    args: readonly string[],
    logPath: string,
  ) {
    const log = createWriteStream(logPath, { flags: 'a' });
    this.child = spawn(binary, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.pipe(log);
    this.child.stderr?.pipe(log);
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, then SIGKILL after 5 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const killed = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(killed);
  }
}

/** The Node object kwok manages: schedulable, with room for the component's pods. */
function nodeManifest(): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: FAKE_NODE_NAME,
      labels: { 'kubernetes.io/hostname': FAKE_NODE_NAME, type: 'kwok' },
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
    },
    status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
      capacity: { cpu: '16', memory: '64Gi', pods: '110' },
    },
  });
}

/** Starts kube-scheduler and kwok against the cluster and registers one kwok Node. */
export async function startFakeNode(cluster: Cluster, logDir: string): Promise<FakeNode> {
  const schedulerPort = await unusedLoopbackPort();
  const scheduler = new BackgroundTool(
    'kube-scheduler',
    toolPath('kube-scheduler'),
    [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      `--authentication-kubeconfig=${cluster.kubeconfigPath}`,
      `--authorization-kubeconfig=${cluster.kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
    ],
    path.join(logDir, 'kube-scheduler.log'),
  );
  const kwok = new BackgroundTool(
    'kwok',
    toolPath('kwok'),
    [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--cidr=10.244.0.1/24',
      '--node-ip=10.0.0.10',
    ],
    path.join(logDir, 'kwok.log'),
  );
  const stop = async (): Promise<void> => {
    await Promise.all([kwok.stop(), scheduler.stop()]);
  };
  try {
    const created = await cluster.kubectl(['apply', '-f', '-'], { stdin: nodeManifest() });
    if (created.code !== 0) throw new Error(`creating Node ${FAKE_NODE_NAME} failed: ${created.stderr}`);
    const ready = await cluster.kubectl(
      ['wait', '--for=condition=Ready', '--timeout=90s', `node/${FAKE_NODE_NAME}`],
      { timeoutMs: 100_000 },
    );
    if (ready.code !== 0) {
      throw new Error(
        `kwok did not make Node ${FAKE_NODE_NAME} Ready (kwok running: ${kwok.running}; ` +
          `logs in ${logDir}): ${ready.stderr}`,
      );
    }
    if (!scheduler.running) throw new Error(`kube-scheduler exited; see ${logDir}/kube-scheduler.log`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
