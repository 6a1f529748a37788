// The deploy tier without `pulumi.com/skipAwait`: Pulumi's await logic runs as it does for users.
// kube-scheduler and kwok (fake-node.ts) give the cluster a node on which pods become Running and
// Ready, so the controller-manager marks the component's Deployments Available and fills its Services'
// endpoints; `pulumi up` waits for exactly that before it reports success (docs/deploy.md, "Waiting for
// the Deployments").
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../e2e/harness';
import { requireBuiltEntries } from '../e2e/forewarn-support';
import { at, kubectlJson, objectExists, stackProjectDirectory } from './deploy-support';
import { FAKE_NODE_NAME, startFakeNode, type FakeNode } from './fake-node';
import { STACK_NAMES } from './forewarn-processes';
import { PulumiWorkspace } from './pulumi-cli';
import { deployToolDirs, requireDeployTools } from './tools';

let cluster: Cluster;
let node: FakeNode | undefined;
let pulumi: PulumiWorkspace;
let project: string;

beforeAll(async () => {
  requireDeployTools(['kwok', 'kube-scheduler']);
  requireBuiltEntries();
  cluster = await startCluster();
  const workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-await-'));
  node = await startFakeNode(cluster, workDir);
  pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: cluster.kubeconfigPath,
    binDirs: deployToolDirs(),
    passphrase: 'deploy-tier-await-passphrase',
  });
  await pulumi.init();
  project = await stackProjectDirectory(workDir);
  console.log(`[deploy await] work dir ${workDir} (pulumi log: ${pulumi.logPath})`);
}, 240_000);

afterAll(async () => {
  await node?.stop();
  await cluster?.stop();
});

test('pulumi up waits until the Deployments are Available, then succeeds', async () => {
  await pulumi.succeed(project, ['stack', 'init', 'await']);
  const up = await pulumi.succeed(project, ['up', '--yes', '--stack', 'await']);
  // Pulumi reported success only after the Deployments were Available: check they are, now.
  for (const name of [STACK_NAMES.controller, STACK_NAMES.webhook]) {
    const deployment = await kubectlJson(cluster, ['-n', STACK_NAMES.namespace, 'get', 'deployment', name]);
    expect(at(deployment, 'metadata', 'annotations', 'pulumi.com/skipAwait')).toBeUndefined();
    const conditions = (at(deployment, 'status', 'conditions') ?? []) as Array<Record<string, string>>;
    expect({ name, available: conditions.find((c) => c.type === 'Available')?.status }).toEqual({
      name,
      available: 'True',
    });
    expect(at(deployment, 'status', 'readyReplicas')).toBe(at(deployment, 'spec', 'replicas'));
  }
  const pods = await kubectlJson(cluster, ['-n', STACK_NAMES.namespace, 'get', 'pods']);
  const nodes = ((at(pods, 'items') ?? []) as unknown[]).map((pod) => at(pod, 'spec', 'nodeName'));
  expect(nodes.length).toBeGreaterThan(0);
  expect(new Set(nodes)).toEqual(new Set([FAKE_NODE_NAME]));
  expect(up.stdout).toMatch(/created/);
  // Nothing drifts once the pods run: the API server stores an empty annotations map as absent, so
  // the component writes none (infra/common.ts); it once showed as `+ annotations: {}` on the TLS Secret.
  await pulumi.succeed(project, ['preview', '--expect-no-changes', '--stack', 'await']);
});

test('pulumi destroy removes what the awaited up created', async () => {
  await pulumi.succeed(project, ['destroy', '--yes', '--stack', 'await']);
  expect(await objectExists(cluster, ['clusterrole', STACK_NAMES.controller])).toBe(false);
  expect(await objectExists(cluster, ['validatingwebhookconfiguration', STACK_NAMES.registration])).toBe(
    false,
  );
});
