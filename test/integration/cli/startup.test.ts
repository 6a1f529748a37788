import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  BUILT_BINARY,
  CLI_TEST_TIMEOUT_MS,
  closedPort,
  REPOSITORY,
  requireBuiltBinary,
  runForewarn,
} from './cli-support';

// The built `forewarn` as a shell runs it: which modules each command loads (the start-up budget of
// docs/benchmarks.md rests on it), the kubectl plugin name, colour flags and environment, and the
// completion scripts run by a real bash.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

const execFileAsync = promisify(execFile);
const ESCAPE = String.fromCharCode(27);
const demoManifests = path.join(REPOSITORY, 'examples/manifests');
const deployment = path.join(REPOSITORY, 'examples/deployment.yaml');

let directory: string;
let preload: string;

beforeAll(async () => {
  requireBuiltBinary();
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-startup-'));
  preload = path.join(directory, 'record-modules.js');
  // Writes every module the process loaded, at exit, to the file FOREWARN_TEST_MODULES names.
  await writeFile(
    preload,
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.FOREWARN_TEST_MODULES, Object.keys(require.cache).join('\\n')));\n",
  );
});

afterAll(() => rm(directory, { recursive: true, force: true }));

/** The packages and Forewarn folders a run of `forewarn args` loaded. */
async function loadedBy(args: readonly string[]): Promise<string[]> {
  const record = path.join(directory, `modules-${args.join('-').replace(/[^\w-]/g, '_')}.txt`);
  await execFileAsync(process.execPath, ['--require', preload, BUILT_BINARY, ...args], {
    cwd: REPOSITORY,
    env: { PATH: process.env.PATH ?? '', FOREWARN_TEST_MODULES: record },
  }).catch((error: { code?: number }) => {
    if (typeof error.code !== 'number') throw error;
  });
  return (await readFile(record, 'utf8')).split('\n');
}

function packagesOf(modules: readonly string[]): Set<string> {
  return new Set(
    modules.flatMap((file) => {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
      return match ? [match[1]] : [];
    }),
  );
}

const ENGINES_AND_SERVERS = [
  'yaml',
  'js-yaml',
  'zod',
  'undici',
  '@kubernetes/client-node',
  '@bufbuild/cel',
  '@bufbuild/protobuf',
  '@open-policy-agent/opa-wasm',
  'pino',
  'express',
  'ws',
  '@modelcontextprotocol/sdk',
  'chokidar',
];

describe('start-up: what each command loads', () => {
  it.each([['--version'], ['--help']])('%s loads commander and the command line only', async (flag) => {
    const modules = await loadedBy([flag]);
    expect([...packagesOf(modules)]).toEqual(['commander']);
    expect(modules.filter((file) => file.includes('/dist/services/controller/'))).toEqual([]);
  });

  it('report loads its schema and table, no engine, parser of manifests or kubeconfig reader', async () => {
    const modules = await loadedBy(['report', '--url', `http://127.0.0.1:${await closedPort()}`]);
    const packages = packagesOf(modules);
    for (const heavy of ENGINES_AND_SERVERS.filter((name) => name !== 'zod'))
      expect({ heavy, loaded: packages.has(heavy) }).toEqual({ heavy, loaded: false });
    expect(packages.has('zod')).toBe(true);
    expect(modules.filter((file) => file.includes('/dist/services/controller/'))).toEqual([]);
  });

  it('check against a controller loads no verdict engine; offline it does', async () => {
    const online = await loadedBy([
      'check',
      '-f',
      deployment,
      '--url',
      `http://127.0.0.1:${await closedPort()}`,
    ]);
    expect(online.filter((file) => file.includes('/controller/verdicts/'))).toEqual([]);
    const offline = await loadedBy(['check', '-f', deployment, '--manifests', demoManifests]);
    expect(offline.some((file) => file.includes('/controller/verdicts/'))).toBe(true);
  });
});

describe('kubectl forewarn', () => {
  it('runs as kubectl-forewarn (package.json bin) and names itself as kubectl shows it', async () => {
    const manifest = JSON.parse(await readFile(path.join(REPOSITORY, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(manifest.bin['kubectl-forewarn']).toBe(manifest.bin.forewarn);
    const plugin = path.join(directory, 'kubectl-forewarn');
    await symlink(BUILT_BINARY, plugin);
    const { stdout } = await execFileAsync(process.execPath, [plugin, '--help'], { cwd: REPOSITORY });
    expect(stdout).toMatch(/^Usage: kubectl forewarn \[options\] \[command\]/);
  });
});

describe('colour', () => {
  const check = ['check', '-f', deployment, '--manifests', demoManifests];
  const coloured = (text: string) => text.includes(`${ESCAPE}[`);

  it('pipes get none, --color=always and FORCE_COLOR force it, --color=never and --no-color win', async () => {
    expect(coloured((await runForewarn(check)).stdout)).toBe(false);
    expect(coloured((await runForewarn([...check, '--color=always'])).stdout)).toBe(true);
    expect(coloured((await runForewarn(check, { env: { FORCE_COLOR: '1' } })).stdout)).toBe(true);
    expect(coloured((await runForewarn(check, { env: { FORCE_COLOR: '0' } })).stdout)).toBe(false);
    // FORCE_COLOR wins over NO_COLOR (as Node's own tty check); the flag wins over both.
    expect(coloured((await runForewarn(check, { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stdout)).toBe(
      true,
    );
    expect(
      coloured((await runForewarn([...check, '--color=never'], { env: { FORCE_COLOR: '1' } })).stdout),
    ).toBe(false);
    expect(
      coloured((await runForewarn([...check, '--no-color'], { env: { FORCE_COLOR: '1' } })).stdout),
    ).toBe(false);
    const wrong = await runForewarn([...check, '--color=sometimes']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/auto, always, never|"auto", "always", "never"/);
  });
});

describe('completion', () => {
  /** What bash completes for the words typed so far (the last one being completed). */
  async function complete(words: readonly string[]): Promise<string[]> {
    const script = (await runForewarn(['completion', 'bash'])).stdout;
    const file = path.join(directory, 'forewarn.bash');
    await writeFile(file, script);
    const quoted = words.map((word) => `'${word}'`).join(' ');
    const { stdout } = await execFileAsync('bash', [
      '-c',
      `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _forewarn; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    return stdout.split('\n').filter((line) => line !== '');
  }

  it('completes commands, flags of the command typed and the values of flags with choices', async () => {
    expect(await complete(['forewarn', ''])).toEqual(
      expect.arrayContaining(['report', 'get', 'check', 'completion']),
    );
    expect(await complete(['forewarn', 'check', '--fa'])).toEqual(['--fail-on']);
    expect(await complete(['forewarn', 'check', '--fail-on', ''])).toEqual(['warning', 'critical', 'never']);
    expect(await complete(['forewarn', 'check', '-o', 's'])).toEqual(['sarif']);
    expect(await complete(['kubectl-forewarn', 'completion', 'z'])).toEqual(['zsh']);
    // report has no --fail-on: only check's flags for check.
    expect(await complete(['forewarn', 'report', '--fa'])).toEqual([]);
  });

  it('prints zsh and fish scripts from the same commands, and refuses another shell', async () => {
    const zsh = await runForewarn(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^#compdef forewarn kubectl-forewarn\n/);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _forewarn forewarn kubectl-forewarn');
    const fish = (await runForewarn(['completion', 'fish'])).stdout;
    for (const command of ['report', 'get', 'check', 'completion'])
      expect(fish).toContain(`complete -c forewarn -n '__fish_use_subcommand' -a ${command} `);
    expect(fish).toContain(
      "complete -c forewarn -n '__fish_seen_subcommand_from check' -l fail-on -x -a 'warning critical never'",
    );
    expect(fish).toContain(
      "complete -c forewarn -n '__fish_seen_subcommand_from check' -s f -l filename -r -F",
    );
    const other = await runForewarn(['completion', 'powershell']);
    expect(other.code).toBe(2);
  });
});
