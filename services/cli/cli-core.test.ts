import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createControllerApp } from '../controller/http/app';
import { silentLogger } from '../logging/logger';
import { parseControllerUrl } from './controller-api';
import { UsageError } from '../flags/command-line';
import { CliError, EXIT_CODES } from './exit-codes';
import { parseConstraintView, parseReport } from './wire-schemas';
import { createStyle, formatTable, shouldColour, wrapText, type OutputStream } from './output';
import { runCli, type CliEnvironment } from './program';
import { webhookQueryFor } from './webhook-query';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
} from '../../test/support/controller-fixtures';

// The pure parts of the command line (exit codes, tables, colour decisions) and runCli in-process
// where a terminal is needed: a child process never gets a TTY in a test.

// Built from the character code: a literal escape in a regular expression trips no-control-regex.
const ESCAPE = String.fromCharCode(27);
const ANSI_ESCAPE = new RegExp(`${ESCAPE}\\[\\d+m`);
const ANSI_ESCAPES = new RegExp(`${ESCAPE}\\[\\d+m`, 'g');
const RED_CRITICAL = new RegExp(`${ESCAPE}\\[31mCritical`);

function capture(isTTY: boolean, columns?: number): OutputStream & { text: string } {
  const stream = { text: '', isTTY, columns, write: (chunk: string) => (stream.text += chunk) };
  return stream;
}

function environment(isTTY: boolean, env: NodeJS.ProcessEnv = {}, columns?: number) {
  const stdout = capture(isTTY, columns);
  const stderr = capture(false);
  const cli: CliEnvironment = { stdout, stderr, env, readStdin: async () => '' };
  return { cli, stdout, stderr };
}

describe('table output', () => {
  it('aligns columns on visible width, paints after padding and leaves the last column unpadded', () => {
    const style = createStyle(true);
    const table = formatTable(
      ['SEVERITY', 'NAME', 'HINT'],
      [
        ['Critical', 'a', 'x'],
        ['Info', 'longer-name', 'y'],
      ],
      (row, column, text) => (column === 0 ? style.severity(row === 0 ? 'Critical' : 'Info', text) : text),
    );
    const plain = table.replace(ANSI_ESCAPES, '');
    expect(plain).toBe('SEVERITY  NAME         HINT\nCritical  a            x\nInfo      longer-name  y\n');
    expect(table).toMatch(ANSI_ESCAPE);
  });

  it('colours only a terminal, and never with NO_COLOR', () => {
    expect(shouldColour({ write: () => true, isTTY: true }, {})).toBe(true);
    expect(shouldColour({ write: () => true, isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(shouldColour({ write: () => true, isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(shouldColour({ write: () => true, isTTY: false }, {})).toBe(false);
    expect(shouldColour({ write: () => true }, {})).toBe(false);
  });
});

describe('controller URL', () => {
  it('accepts http(s) URLs with a path prefix and refuses anything else as a usage error', () => {
    expect(parseControllerUrl('https://forewarn.example.com/api').pathname).toBe('/api');
    for (const value of ['localhost:8080', 'ftp://host', 'not a url']) {
      const failure = (() => {
        try {
          parseControllerUrl(value);
        } catch (error) {
          return error;
        }
      })();
      expect(failure).toBeInstanceOf(UsageError);
      expect((failure as UsageError).exitCode).toBe(EXIT_CODES.usage);
    }
  });
});

describe('runCli in a terminal', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const demo = indexObjects(demoClusterObjects());
    server = createServer(
      createControllerApp({
        index: demo.index,
        runtimeState: () => runtimeStateFor(demo),
        configuredDetailLevel: 'summary',
        clock: () => FIXED_NOW,
        logger: silentLogger(),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('colours severities on a TTY', async () => {
    const { cli, stdout } = environment(true);
    expect(await runCli(['report', '-n', 'shop', '--url', url], cli)).toBe(0);
    expect(stdout.text).toMatch(RED_CRITICAL);
  });

  it('takes the controller URL from the environment it is given, and --url over it', async () => {
    const fromEnvironment = environment(false, { FOREWARN_URL: url });
    expect(await runCli(['report', '-n', 'shop', '-o', 'json'], fromEnvironment.cli)).toBe(0);
    expect(JSON.parse(fromEnvironment.stdout.text)).toMatchObject({ namespace: 'shop' });
    const overridden = environment(false, { FOREWARN_URL: 'http://127.0.0.1:1' });
    expect(await runCli(['report', '-n', 'shop', '--url', url], overridden.cli)).toBe(0);
  });

  it('prints plain text on a TTY when NO_COLOR is set, and with -o json', async () => {
    const noColour = environment(true, { NO_COLOR: '1' });
    expect(await runCli(['report', '-n', 'shop', '--url', url], noColour.cli)).toBe(0);
    expect(noColour.stdout.text).not.toMatch(ANSI_ESCAPE);
    const json = environment(true);
    expect(await runCli(['report', '-n', 'shop', '--url', url, '-o', 'json'], json.cli)).toBe(0);
    expect(JSON.parse(json.stdout.text)).toMatchObject({ namespace: 'shop', detailLevel: 'summary' });
  });

  it('--help exits 0 and lists the exit codes; an unknown option exits 2', async () => {
    const help = environment(false);
    expect(await runCli(['--help'], help.cli)).toBe(0);
    // Each code's meaning: exit-codes.test.ts.
    expect(help.stdout.text).toContain('Exit codes (see docs/cli.md):');
    const unknown = environment(false);
    expect(await runCli(['report', '--bogus'], unknown.cli)).toBe(2);
    expect(unknown.stderr.text).toMatch(/unknown option '--bogus'/);
  });

  it('refuses --manifests together with an explicit --url', async () => {
    const both = environment(false);
    expect(await runCli(['check', '-f', 'x.yaml', '--manifests', '.', '--url', url], both.cli)).toBe(2);
    expect(both.stderr.text).toMatch(/--manifests and --url are alternatives/);
  });
});

describe('webhook query of check --url', () => {
  it('carries the labels and companion hints the webhook would extract', () => {
    const query = webhookQueryFor({
      namespace: 'shop',
      resource: { group: 'apps', resource: 'deployments' },
      labels: { app: 'web' },
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'web',
          namespace: 'shop',
          annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt', unrelated: 'x' },
        },
        spec: {
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', ports: [{ name: 'metrics', containerPort: 9090 }] }] },
          },
        },
      },
    });
    expect(query).toMatchObject({
      namespace: 'shop',
      resource: { group: 'apps', resource: 'deployments' },
      labels: { app: 'web' },
      subject: {
        kind: 'Deployment',
        name: 'web',
        annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        portNames: ['metrics'],
      },
    });
  });

  it('sends no subject for objects without companions (a ConfigMap)', () => {
    const query = webhookQueryFor({
      namespace: 'shop',
      resource: { group: '', resource: 'configmaps' },
      labels: {},
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' } },
    });
    expect(query.subject).toBeUndefined();
  });
});

describe('answers of the controller', () => {
  it('refuses a body that is not a report with exit 4, naming the field, instead of trusting it', () => {
    const failure = (() => {
      try {
        parseReport({ namespace: 'shop', constraints: 'none' });
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(EXIT_CODES.unavailable);
    expect((failure as CliError).message).toMatch(/not a report at constraintCount/);
  });

  it('keeps fields it does not know, so -o json prints the body as sent', () => {
    const view = {
      name: 'n',
      summary: 's',
      namespace: 'shop',
      constraint_type: 'NetworkIngress',
      severity: 'Warning',
      source_kind: 'NetworkPolicy',
      source_api_version: 'networking.k8s.io/v1',
      effect: 'deny',
      affected_workloads: [],
      tags: [],
      detail_level: 'summary',
      last_observed: '2026-01-01T00:00:00Z',
      remediation: { summary: 'r', steps: [] },
      metrics: null,
      newer_field: 1,
    };
    expect(parseConstraintView(view)).toEqual(view);
  });
});

describe('wrapping text to a terminal', () => {
  it('breaks at spaces within the width, indents the following lines and cuts only words longer than a line', () => {
    expect(wrapText('aaa bbb ccc ddd', 10, '  ', '    ')).toEqual(['  aaa bbb', '    ccc', '    ddd']);
    expect(wrapText('x'.repeat(12), 10, '  ')).toEqual(['  xxxxxxxx', '  xxxx']);
    expect(wrapText('whole line', undefined, '> ')).toEqual(['> whole line']);
  });
});

describe('check in a terminal', () => {
  const demoManifests = path.join(__dirname, '../../examples/manifests');
  let directory: string;
  let manifest: string;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'forewarn-check-terminal-'));
    manifest = path.join(directory, 'web.yaml');
    await writeFile(
      manifest,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web, namespace: shop }\nspec:\n  selector: { matchLabels: { app: frontend } }\n  template:\n    metadata: { labels: { app: frontend } }\n    spec: { containers: [{ name: web, image: "registry.example.com/web:1" }] }\n',
    );
  });

  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('shows each finding once and whole, grouped by consequence, with its evidence, wrapped to the width', async () => {
    const { cli, stdout } = environment(true, {}, 100);
    expect(await runCli(['check', '-f', manifest, '--manifests', demoManifests], cli)).toBe(3);
    const plain = stdout.text.replace(ANSI_ESCAPES, '');
    const lines = plain.split('\n');
    for (const line of lines) expect({ line, width: [...line].length <= 100 }).toEqual({ line, width: true });
    // The 256-character cut is the API server's, for warnings: the terminal shows the whole text.
    const unwrapped = plain.replace(/\n +/g, ' ');
    const json = environment(false);
    await runCli(['check', '-f', manifest, '--manifests', demoManifests, '-o', 'json'], json.cli);
    type Finding = { summary: string; remediationHint: string };
    const report = (
      JSON.parse(json.stdout.text) as {
        reports: Array<{
          objects: Array<{ findings: Finding[] }>;
          standing: Array<{ namespace: string; constraints: Finding[] }>;
        }>;
      }
    ).reports[0];
    const findings = [...report.objects[0].findings, ...report.standing[0].constraints];
    expect(report.objects[0].findings).toHaveLength(4);
    expect(report.standing.map((standing) => standing.namespace)).toEqual(['shop']);
    expect(findings.length).toBeGreaterThan(8);
    for (const finding of findings) {
      expect(unwrapped).toContain(finding.summary);
      expect(unwrapped).toContain(`fix: ${finding.remediationHint}`);
    }
    expect(unwrapped).toContain(
      'fix: change your resource to pass Kyverno rule "validate-requests" of ClusterPolicy "require-requests"',
    );
    // Once each: no warning line repeated by an evidence block below it.
    const occurrences = (needle: string) => unwrapped.split(needle).length - 1;
    expect(occurrences('Readiness probes are required.')).toBe(1);
    expect(occurrences('"block-cloud-metadata" denies all egress traffic for all pods')).toBe(1);
    // Grouped, in this order, each finding with its evidence under it.
    const headings = [
      'will be rejected (3):',
      'will be audited or warned about (1):',
      'namespace shop: 8 constraints that only apply',
    ];
    const positions = headings.map((heading) => unwrapped.indexOf(heading));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((left, right) => left - right));
    const probe = unwrapped.indexOf('Readiness probes are required.');
    expect(probe).toBeGreaterThan(positions[1]);
    expect(unwrapped.indexOf('at spec.template.spec.containers[0].readinessProbe')).toBeGreaterThan(probe);
    expect(unwrapped.indexOf('at spec.template.spec.containers[0].readinessProbe')).toBeLessThan(
      positions[2],
    );
  });

  it('checks a Namespace against a controller too, as its own object (not skipped)', async () => {
    const file = path.join(directory, 'namespace.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: Namespace\nmetadata: { name: team }\n');
    const demo = indexObjects(demoClusterObjects());
    const server = createServer(
      createControllerApp({
        index: demo.index,
        runtimeState: () => runtimeStateFor(demo),
        configuredDetailLevel: 'summary',
        clock: () => FIXED_NOW,
        logger: silentLogger(),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const { cli, stdout } = environment(false);
      expect(await runCli(['check', '-f', file, '--url', url, '-o', 'json'], cli)).toBe(0);
      const output = JSON.parse(stdout.text) as {
        reports: Array<{ objects: Array<Record<string, unknown>> }>;
      };
      expect(output.reports[0].objects[0]).toMatchObject({ kind: 'Namespace', resource: 'namespaces' });
      expect(output.reports[0].objects[0].skipped).toBeUndefined();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('leaves lines whole when the output is not a terminal', async () => {
    const { cli, stdout } = environment(false);
    expect(await runCli(['check', '-f', manifest, '--manifests', demoManifests], cli)).toBe(3);
    expect(stdout.text).toMatch(
      /^ {6}\[CRITICAL\] will be rejected: container "web": Every container must set CPU .{80,}$/m,
    );
  });
});

describe('redacted names in the terminal', () => {
  const demo = indexObjects(demoClusterObjects());
  const servers: Server[] = [];

  async function serve(level: 'summary' | 'full'): Promise<string> {
    const server = createServer(
      createControllerApp({
        index: demo.index,
        runtimeState: () => runtimeStateFor(demo),
        configuredDetailLevel: level,
        clock: () => FIXED_NOW,
        logger: silentLogger(),
      }),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  afterAll(async () => {
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('shows each redacted row with its reference, which forewarn get --ref resolves at full only', async () => {
    const summaryUrl = await serve('summary');
    const report = environment(false);
    expect(await runCli(['report', '-n', 'shop', '--url', summaryUrl], report.cli)).toBe(0);
    const refs = [...report.stdout.text.matchAll(/redacted \((fw-[0-9a-f]{16})\)/g)].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(3);
    expect(new Set(refs).size).toBe(refs.length);

    const refused = environment(false);
    expect(await runCli(['get', '--ref', refs[0], '--url', summaryUrl], refused.cli)).toBe(4);
    expect(refused.stderr.text).toMatch(/needs the full detail level/);

    const resolved = environment(false);
    expect(await runCli(['get', '--ref', refs[0], '--url', await serve('full')], resolved.cli)).toBe(0);
    const named = demo.index.allConstraints().find((constraint) => constraint.ref === refs[0]);
    expect(resolved.stdout.text).toContain(`Reference:          ${refs[0]}`);
    expect(resolved.stdout.text).toContain(`Name:               ${named?.name}`);

    const misuse = environment(false);
    expect(await runCli(['get', 'shop', '--ref', refs[0], '--url', summaryUrl], misuse.cli)).toBe(2);
    expect(await runCli(['get', '--ref', 'redacted', '--url', summaryUrl], environment(false).cli)).toBe(2);
    expect(await runCli(['get', 'shop', '--url', summaryUrl], environment(false).cli)).toBe(2);
  });
});
