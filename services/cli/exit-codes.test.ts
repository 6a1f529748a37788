import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkExitCode, EXIT_CODE_MEANINGS, EXIT_CODES } from './exit-codes';
import { runCli, type CliEnvironment } from './program';

// Issue 31: `forewarn --help`, `forewarn check --help`, the table of docs/cli.md and the code agree
// on what each exit code means.

async function run(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const environment: CliEnvironment = {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: () => true },
    env: {},
    readStdin: async () => '',
  };
  const code = await runCli(args, environment);
  return { code, stdout };
}

async function helpOf(args: string[]): Promise<string> {
  const { code, stdout } = await run(args);
  expect(code).toBe(0);
  return stdout;
}

const ROOT = path.join(__dirname, '../..');
const demoCheck = (manifest: string) =>
  run(['check', '-f', path.join(ROOT, manifest), '--manifests', path.join(ROOT, 'examples/manifests')]);

/** The help text with its wrapped lines joined back: `  3  check: an object ...`. */
function unwrapped(help: string): string {
  return help.replace(/\n {5}(?=\S)/g, ' ');
}

describe('exit codes', () => {
  it('has one meaning per code, in help, check help and docs/cli.md alike', async () => {
    const codes = EXIT_CODE_MEANINGS.map(({ code }) => code).sort();
    expect(codes).toEqual(Object.values(EXIT_CODES).sort());
    const help = unwrapped(await helpOf(['--help']));
    const checkHelp = unwrapped(await helpOf(['check', '--help']));
    const documentation = readFileSync(path.join(__dirname, '../../docs/cli.md'), 'utf8');
    for (const { code, meaning } of EXIT_CODE_MEANINGS) {
      expect(help).toContain(`  ${code}  ${meaning}`);
      expect(checkHelp).toContain(`  ${code}  ${meaning}`);
      expect(documentation).toContain(`| \`${code}\` | ${meaning} |`);
    }
  });

  it('keeps help lines within the 80 columns commander wraps at', async () => {
    for (const line of (await helpOf(['check', '--help'])).split('\n'))
      expect([...line].length).toBeLessThanOrEqual(80);
  });

  it('exits 3 for rejections, 1 for other findings, cut off at --fail-on', () => {
    expect(checkExitCode(1, 5, 'warning')).toBe(3);
    expect(checkExitCode(0, 5, 'warning')).toBe(1);
    expect(checkExitCode(0, 5, 'critical')).toBe(0);
    expect(checkExitCode(1, 0, 'critical')).toBe(3);
    expect(checkExitCode(1, 1, 'never')).toBe(0);
    expect(checkExitCode(0, 0, 'warning')).toBe(0);
  });

  it('exits 0 for an app the demo policies admit, however many network and mesh rules its namespace has', async () => {
    const compliant = await demoCheck('examples/compliant-app.yaml');
    expect(compliant.stdout).toMatch(/checked: 0 will be rejected, 0 audited or warned, 0 not evaluated/);
    expect(compliant.stdout).toMatch(/namespace shop: \d+ constraints that only apply/);
    expect(compliant.code).toBe(EXIT_CODES.ok);
    const rejected = await demoCheck('examples/deployment.yaml');
    expect(rejected.stdout).toMatch(/checked: 2 will be rejected/);
    expect(rejected.code).toBe(EXIT_CODES.critical);
  });
});
