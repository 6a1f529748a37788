import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type CliEnvironment } from './program';
import {
  deploymentWithReplicas,
  PARAM_KIND_FLAG_VALUE,
  replicaLimit,
  replicaLimitBinding,
  replicaLimitCrd,
  replicaLimitPolicy,
} from '../../test/support/replica-limit-params';

// `forewarn check --manifests DIR --param-kinds ...`: params of a custom kind found in DIR decide the
// ValidatingAdmissionPolicy verdict offline, as the controller's --param-kinds does on a cluster.
// Offline the flag is not needed (issue 31): every kind the directory holds can be a param.

function environment() {
  const stdout = { text: '', isTTY: false, write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', isTTY: false, write: (chunk: string) => (stderr.text += chunk) };
  const cli: CliEnvironment = { stdout, stderr, env: {}, readStdin: async () => '' };
  return { cli, stdout, stderr };
}

describe('check --manifests with --param-kinds', () => {
  let directory: string;
  let cluster: string;
  let manifest: string;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'forewarn-check-params-'));
    cluster = path.join(directory, 'cluster');
    await mkdir(cluster);
    const objects = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
      replicaLimitCrd(),
      replicaLimit('limit', 3, 'team'),
      replicaLimitPolicy(),
      replicaLimitBinding({ name: 'limit', parameterNotFoundAction: 'Deny' }),
    ];
    await writeFile(
      path.join(cluster, 'policies.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
    manifest = path.join(directory, 'web.json');
    await writeFile(manifest, JSON.stringify(deploymentWithReplicas(5, 'team')));
  });

  afterAll(() => rm(directory, { recursive: true, force: true }));

  const summaries = (text: string): string[] =>
    (
      JSON.parse(text) as { reports: Array<{ objects: Array<{ findings: Array<{ summary: string }> }> }> }
    ).reports.flatMap((report) => report.objects.flatMap((object) => object.findings.map((f) => f.summary)));

  it('decides the verdict with the params of the directory', async () => {
    const { cli, stdout } = environment();
    const args = ['check', '-f', manifest, '--manifests', cluster, '--param-kinds', PARAM_KIND_FLAG_VALUE];
    expect(await runCli([...args, '-o', 'json'], cli)).toBe(3);
    expect(summaries(stdout.text).join('\n')).toContain('will be rejected: at most 3 replicas');
  });

  it('decides it without the flag too (offline, every kind in the directory can be a param), and refuses the flag without --manifests', async () => {
    const without = environment();
    expect(await runCli(['check', '-f', manifest, '--manifests', cluster, '-o', 'json'], without.cli)).toBe(
      3,
    );
    expect(summaries(without.stdout.text).join('\n')).toContain('will be rejected: at most 3 replicas');
    const alone = environment();
    expect(await runCli(['check', '-f', manifest, '--param-kinds', PARAM_KIND_FLAG_VALUE], alone.cli)).toBe(
      2,
    );
    expect(alone.stderr.text).toContain('--param-kinds goes with --manifests');
    const configMaps = environment();
    expect(
      await runCli(
        ['check', '-f', manifest, '--manifests', cluster, '--param-kinds', 'v1/configmaps'],
        configMaps.cli,
      ),
    ).toBe(2);
  });
});
