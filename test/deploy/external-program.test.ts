// A platform team's own Pulumi program, outside the repository: a temporary folder with Pulumi.yaml,
// package.json (its entry point under `main`), tsconfig.json, a TypeScript program and its own
// node_modules, where the packed `forewarn` package (`npm pack`) and the @pulumi packages are installed
// as a user would. It deploys the component with arguments of its own, previews no change and destroys
// cleanly, all with the tier's tools; a program that throws fails as under Pulumi's own host.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { repositoryRoot, requireBuiltEntries } from '../e2e/forewarn-support';
import { at, kubectlJson, kubectlOk, objectExists } from './deploy-support';
import { PulumiWorkspace, runCommand, tail } from './pulumi-cli';
import { deployToolDirs, requireDeployTools } from './tools';

const NAME = 'platform-fw';
const NAMESPACE = 'platform-warnings';

let cluster: Cluster;
let pulumi: PulumiWorkspace;
let program: string;

/** The versions the repository develops against: the user installs the same ones next to forewarn. */
function devVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  return manifest.devDependencies[name];
}

const PROGRAM = `import * as pulumi from '@pulumi/pulumi';
import { DetailLevel, Forewarn } from 'forewarn';

const config = new pulumi.Config();
if (config.getBoolean('fail')) {
  throw new Error('the platform program refuses to run: fail is set');
}

const forewarn = new Forewarn('${NAME}', {
  namespace: { name: '${NAMESPACE}', labels: { team: 'platform' } },
  controller: { detailLevel: DetailLevel.Detailed, contact: 'platform@example.com' },
  admissionWebhook: { timeoutSeconds: 4, excludedNamespaces: ['istio-system'] },
  // No kubelet runs in this cluster: do not wait for pods (await.test.ts covers the waiting).
  annotations: { 'pulumi.com/skipAwait': 'true' },
});

export const namespace = forewarn.namespace;
export const webhookConfigurationName = forewarn.webhookConfigurationName;
`;

async function npm(args: readonly string[], cwd: string, timeoutMs: number): Promise<string> {
  const result = await runCommand('npm', args, cwd, { npm_config_update_notifier: 'false' }, timeoutMs);
  if (result.code !== 0) {
    throw new Error(
      `npm ${args.join(' ')} exited ${result.code}\n${tail(result.stdout)}\n${tail(result.stderr)}`,
    );
  }
  return result.stdout;
}

beforeAll(async () => {
  requireDeployTools();
  requireBuiltEntries();
  const workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-external-'));
  const packed = JSON.parse(
    await npm(['pack', '--json', '--pack-destination', workDir], repositoryRoot, 120_000),
  ) as Array<{ filename: string }>;
  const tarball = path.join(workDir, packed[0].filename);
  program = path.join(workDir, 'platform');
  await mkdir(path.join(program, 'src'), { recursive: true });
  await writeFile(
    path.join(program, 'Pulumi.yaml'),
    'name: platform-forewarn\nruntime:\n  name: nodejs\n  options:\n    packagemanager: npm\n' +
      'description: A platform team deploying Forewarn from the packed package\n',
  );
  await writeFile(
    path.join(program, 'package.json'),
    JSON.stringify(
      {
        name: 'platform-forewarn',
        private: true,
        main: 'src/forewarn-stack.ts',
        dependencies: {
          forewarn: `file:${tarball}`,
          '@pulumi/pulumi': devVersion('@pulumi/pulumi'),
          '@pulumi/kubernetes': devVersion('@pulumi/kubernetes'),
          '@pulumi/tls': devVersion('@pulumi/tls'),
        },
        devDependencies: { typescript: devVersion('typescript'), '@types/node': devVersion('@types/node') },
      },
      null,
      2,
    ),
  );
  await writeFile(
    path.join(program, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2020',
        module: 'commonjs',
        moduleResolution: 'node',
        esModuleInterop: true,
        skipLibCheck: true,
        outDir: 'bin',
      },
      files: ['src/forewarn-stack.ts'],
    }),
  );
  await writeFile(path.join(program, 'src', 'forewarn-stack.ts'), PROGRAM);
  // Everything comes from npm's cache once the repository was installed (--prefer-offline).
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline'], program, 900_000);
  cluster = await startCluster();
  pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: cluster.kubeconfigPath,
    binDirs: deployToolDirs(),
    passphrase: 'deploy-tier-external-passphrase',
  });
  await pulumi.init();
  console.log(`[deploy external] program ${program} (pulumi log: ${pulumi.logPath})`);
}, 1_000_000);

afterAll(async () => {
  await cluster?.stop();
});

test('the packed package deploys from a TypeScript program outside the repository', async () => {
  await pulumi.succeed(program, ['stack', 'init', 'platform']);
  await pulumi.succeed(program, ['up', '--yes', '--stack', 'platform']);
  const outputs = JSON.parse(
    (await pulumi.succeed(program, ['stack', 'output', '--json', '--stack', 'platform'])).stdout,
  );
  expect(outputs).toEqual({ namespace: NAMESPACE, webhookConfigurationName: `${NAME}-webhook` });
  const namespace = await kubectlJson(cluster, ['get', 'namespace', NAMESPACE]);
  expect(at(namespace, 'metadata', 'labels', 'team')).toBe('platform');
  const deployment = await kubectlJson(cluster, ['-n', NAMESPACE, 'get', 'deployment', `${NAME}-controller`]);
  const containers = JSON.stringify(at(deployment, 'spec', 'template', 'spec', 'containers'));
  expect(containers).toContain('--detail-level=detailed');
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    `${NAME}-webhook`,
  ]);
  expect(at(registration, 'webhooks')).toEqual([expect.objectContaining({ timeoutSeconds: 4 })]);
  expect(JSON.stringify(at(registration, 'webhooks'))).toContain('istio-system');
});

test('a second preview of the external program shows no changes', async () => {
  await pulumi.succeed(program, ['preview', '--expect-no-changes', '--stack', 'platform']);
});

test('an error thrown by the program fails the preview with its message, as under Pulumi', async () => {
  await pulumi.succeed(program, ['config', 'set', 'fail', 'true', '--stack', 'platform']);
  const preview = await pulumi.run(program, ['preview', '--stack', 'platform']);
  const output = preview.stdout + preview.stderr;
  expect(preview.code).not.toBe(0);
  expect(output).toMatch(/the platform program refuses to run: fail is set/);
  expect(output).not.toMatch(/Pulumi SDK is not installed|could not resolve/);
  await pulumi.succeed(program, ['config', 'rm', 'fail', '--stack', 'platform']);
});

test('pulumi destroy of the external program leaves nothing behind', async () => {
  await pulumi.succeed(program, ['destroy', '--yes', '--stack', 'platform']);
  const selector = `-l=app.kubernetes.io/instance=${NAME}`;
  for (const kind of ['clusterroles', 'clusterrolebindings', 'validatingwebhookconfigurations']) {
    const left = (await kubectlOk(cluster, ['get', kind, selector, '-o', 'name'])).trim();
    expect({ kind, left }).toEqual({ kind, left: '' });
  }
  // The controller-manager finalizes the namespace (and with it every namespaced object).
  await waitFor(async () => !(await objectExists(cluster, ['namespace', NAMESPACE])), 120_000, {
    description: `namespace ${NAMESPACE} deleted`,
    intervalMs: 1_000,
  });
});
