// The deploy tier from Python: examples/python uses the TypeScript component through its
// multi-language package (`pulumi package add plugin/`: schema from ComponentProvider, a generated
// pulumi_forewarn SDK), then `pulumi up` deploys it for real and `pulumi destroy` removes it.
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, type Cluster } from '../e2e/harness';
import { repositoryRoot } from '../e2e/forewarn-support';
import { at, kubectlJson, kubectlOk, objectExists } from './deploy-support';
import { PulumiWorkspace, runCommand } from './pulumi-cli';
import { deployToolDirs, pythonVirtualenv, requireDeployTools } from './tools';

let cluster: Cluster;
let pulumi: PulumiWorkspace;
let program: string;

beforeAll(async () => {
  requireDeployTools();
  cluster = await startCluster();
  const workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-python-'));
  pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: cluster.kubeconfigPath,
    binDirs: deployToolDirs(),
    passphrase: 'deploy-tier-python-passphrase',
  });
  await pulumi.init();
  program = path.join(workDir, 'python');
  await cp(path.join(repositoryRoot, 'examples', 'python'), program, {
    recursive: true,
    filter: (source) => !/\/(venv|sdks|__pycache__)$/.test(source),
  });
  // The one change to the example: its virtualenv is the tier's cached one (python-venv.sh).
  const projectFile = path.join(program, 'Pulumi.yaml');
  const project = await readFile(projectFile, 'utf8');
  await writeFile(projectFile, project.replace(/virtualenv: venv/, `virtualenv: ${pythonVirtualenv()}`));
  console.log(`[deploy python] work dir ${workDir} (pulumi log: ${pulumi.logPath})`);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

test('pulumi package add generates the pulumi_forewarn SDK from the TypeScript component', async () => {
  await pulumi.succeed(program, ['package', 'add', path.join(repositoryRoot, 'plugin')]);
  expect(await readFile(path.join(program, 'requirements.txt'), 'utf8')).toMatch(/sdks\/forewarn/);
  const python = path.join(pythonVirtualenv(), 'bin', 'python');
  const probe = await runCommand(
    python,
    ['-c', 'import pulumi_forewarn as f; print(f.Forewarn.__name__, f.DetailLevel.DETAILED.value)'],
    program,
    {},
    60_000,
  );
  expect({ code: probe.code, stdout: probe.stdout.trim(), stderr: probe.stderr }).toEqual({
    code: 0,
    stdout: 'Forewarn detailed',
    stderr: '',
  });
});

test("invalid arguments from Python fail the preview with the component's message", async () => {
  await pulumi.succeed(program, ['stack', 'init', 'invalid']);
  const stackFile = path.join(program, 'Pulumi.invalid.yaml');
  const settings = await readFile(stackFile, 'utf8');
  await writeFile(stackFile, `${settings}config:\n  forewarn-python:namespace: Not_A_Label\n`);
  const preview = await pulumi.run(program, ['preview', '--stack', 'invalid']);
  const output = preview.stdout + preview.stderr;
  expect(preview.code).not.toBe(0);
  expect(output).toMatch(/invalid arguments for Forewarn "forewarn-py"/);
  expect(output).toMatch(/namespace\.name must be a DNS-1123 label/);
});

test('pulumi up of the Python program deploys the component', async () => {
  await pulumi.succeed(program, ['stack', 'init', 'py']);
  const stackFile = path.join(program, 'Pulumi.py.yaml');
  const settings = await readFile(stackFile, 'utf8');
  await writeFile(
    stackFile,
    `${settings}config:\n  forewarn-python:annotations:\n    pulumi.com/skipAwait: 'true'\n`,
  );
  await pulumi.succeed(program, ['up', '--yes', '--stack', 'py']);
  const outputs = JSON.parse(
    (await pulumi.succeed(program, ['stack', 'output', '--json', '--stack', 'py'])).stdout,
  );
  expect(outputs).toMatchObject({
    namespace: 'forewarn-py',
    controllerServiceName: 'forewarn-py-controller',
    webhookConfigurationName: 'forewarn-py-webhook',
  });
  const deployment = await kubectlJson(cluster, [
    '-n',
    'forewarn-py',
    'get',
    'deployment',
    'forewarn-py-controller',
  ]);
  const containers = at(deployment, 'spec', 'template', 'spec', 'containers');
  expect(JSON.stringify(containers)).toContain('--detail-level=detailed');
  const registration = await kubectlJson(cluster, [
    'get',
    'validatingwebhookconfiguration',
    'forewarn-py-webhook',
  ]);
  expect(at(registration, 'webhooks')).toEqual([expect.objectContaining({ timeoutSeconds: 3 })]);
  expect(await objectExists(cluster, ['clusterrole', 'forewarn-py-controller'])).toBe(true);
  await pulumi.succeed(program, ['preview', '--expect-no-changes', '--stack', 'py']);
});

test('pulumi destroy of the Python program removes every cluster-scoped object', async () => {
  await pulumi.succeed(program, ['destroy', '--yes', '--stack', 'py']);
  const selector = '-l=app.kubernetes.io/instance=forewarn-py';
  for (const kind of ['clusterroles', 'clusterrolebindings', 'validatingwebhookconfigurations']) {
    const left = (await kubectlOk(cluster, ['get', kind, selector, '-o', 'name'])).trim();
    expect({ kind, left }).toEqual({ kind, left: '' });
  }
});
