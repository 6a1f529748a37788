import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ConstraintView, Report } from '../../../services/model/api';
import type { ManifestCheckReport } from '../../../services/controller/check/manifest-check';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { silentLogger } from '../../../services/logging/logger';
import { FIXED_NOW } from '../../support/controller-fixtures';
import {
  CLI_TEST_TIMEOUT_MS,
  closedPort,
  REPOSITORY,
  requireBuiltBinary,
  runForewarn,
  writeExitCodeCluster,
} from './cli-support';

// The built `forewarn` binary as a user runs it: against a controller started here on an ephemeral
// port, and offline against directories of manifests. Needs `npm run build` first.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

const DEMO_MANIFESTS = path.join(REPOSITORY, 'examples/manifests');
// Built from the character code: a literal escape in a regular expression trips no-control-regex.
const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[`);

interface CheckOutput {
  reports: ManifestCheckReport[];
  criticalCount: number;
  warningCount: number;
}

describe('forewarn command line (built binary)', () => {
  let controller: RunningController;
  let url: string;
  let fixtures: string;

  beforeAll(async () => {
    requireBuiltBinary();
    const config = parseControllerConfig(
      ['--manifests', DEMO_MANIFESTS, '--address', '127.0.0.1', '--port', '0', '--mcp=false'],
      {},
    );
    controller = await startController(config, silentLogger(), { clock: () => FIXED_NOW });
    url = `http://127.0.0.1:${controller.port}`;
    fixtures = await writeExitCodeCluster();
  });

  afterAll(async () => {
    await controller?.close();
    if (fixtures) await rm(fixtures, { recursive: true, force: true });
  });

  it('has a shebang so dist/services/cli/main.js runs as the package bin', async () => {
    const source = await readFile(path.join(REPOSITORY, 'dist/services/cli/main.js'), 'utf8');
    expect(source.startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('report prints an aligned table, severity first, without colours in a pipe', async () => {
    const run = await runForewarn(['report', '-n', 'shop', '--url', url]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(await (await fetch(`${url}/resources/reports/shop`)).text()) as Report;
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `Namespace shop: ${report.constraintCount} constraints (${report.criticalCount} critical, ${report.warningCount} warning, ${report.infoCount} info), detail level summary`,
    );
    expect(lines[2]).toMatch(/^SEVERITY\s+TYPE\s+NAME\s+SOURCE\s+EFFECT\s+REMEDIATION$/);
    const rows = lines.slice(3);
    expect(rows).toHaveLength(report.constraintCount);
    expect(rows[0]).toMatch(/^Critical\s{2,}/);
    // Aligned: every row's TYPE column starts where the header's does.
    const typeColumn = lines[2].indexOf('TYPE');
    for (const row of rows) expect(row.slice(typeColumn - 2, typeColumn)).toBe('  ');
    expect(run.stdout).not.toMatch(ANSI_ESCAPE);
  });

  it('report -o json prints exactly the controller body; FOREWARN_URL sets the controller', async () => {
    const run = await runForewarn(['report', '-n', 'shop', '-o', 'json'], { env: { FOREWARN_URL: url } });
    expect(run.code).toBe(0);
    const body = JSON.parse(await (await fetch(`${url}/resources/reports/shop`)).text()) as Report;
    expect(JSON.parse(run.stdout)).toEqual(body);
  });

  it('get shows one constraint, names with a slash included, in table, json and yaml', async () => {
    const table = await runForewarn(['get', 'shop', 'api-allow-frontend/ingress', '--url', url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Name:\s+api-allow-frontend\/ingress$/m);
    expect(table.stdout).toMatch(/^Affected workloads:\s+api$/m);
    const json = await runForewarn(['get', 'shop', 'compute', '--url', url, '-o', 'json']);
    expect((JSON.parse(json.stdout) as ConstraintView).constraint_type).toBe('ResourceLimit');
    const yaml = await runForewarn(['-o', 'yaml', 'get', 'shop', 'compute', '--url', url]);
    expect(yaml.stdout).toMatch(/^constraint_type: ResourceLimit$/m);
  });

  it('says how to port-forward when the controller is unreachable (exit 4)', async () => {
    const run = await runForewarn([
      'report',
      '-n',
      'shop',
      '--url',
      `http://127.0.0.1:${await closedPort()}`,
    ]);
    expect(run.code).toBe(4);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/cannot reach the Forewarn controller .* \(connection refused\)/);
    expect(run.stderr).toContain('kubectl -n forewarn-system port-forward svc/forewarn-controller 8080:8080');
  });

  it('rejects usage mistakes with exit 2 and a missing constraint with exit 4', async () => {
    const badNamespace = await runForewarn(['report', '-n', 'Not_A_Namespace', '--url', url]);
    expect(badNamespace.code).toBe(2);
    expect(badNamespace.stderr).toMatch(/invalid namespace "Not_A_Namespace"/);
    expect((await runForewarn(['check', '--url', url])).code).toBe(2);
    expect((await runForewarn(['report', '--output', 'xml'])).code).toBe(2);
    const missing = await runForewarn(['get', 'shop', 'no-such-policy', '--url', url]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/constraint shop\/no-such-policy not found/);
  });

  it('check exits 0 when clean, 1 on warnings, 3 on critical, with --fail-on choosing the threshold', async () => {
    const deployment = path.join(fixtures, 'deployment.yaml');
    const cluster = path.join(fixtures, 'cluster');
    const check = (namespace: string, ...extra: string[]) =>
      runForewarn(['check', '-f', deployment, '--manifests', cluster, '-n', namespace, ...extra]);

    const clean = await check('team-clean');
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/Deployment team-clean\/web \(apps\/deployments\): no findings/);

    const warned = await check('team-warn');
    expect(warned.code).toBe(1);
    expect(warned.stdout).toMatch(
      /\[WARNING\] will be recorded in the audit log: .*an owner label is required/,
    );
    // The NetworkPolicy only applies (issue 31): listed once for the namespace, no finding.
    expect(warned.stdout).toMatch(/namespace team-warn: 1 constraint that only applies/);
    expect(warned.stdout).toMatch(/\[network\] NetworkPolicy "default-deny" denies all ingress traffic/);
    expect((await check('team-warn', '--fail-on', 'critical')).code).toBe(0);

    const critical = await check('team-critical');
    expect(critical.code).toBe(3);
    // The verdict names what fails on this object, and the evidence lists the field.
    expect(critical.stdout).toMatch(
      /\[CRITICAL\] its pods will be rejected: container "web" sets no cpu request; .* \(ResourceQuota "compute"\)/,
    );
    expect(critical.stdout).toContain('at spec.template.spec.containers[0].resources.requests.cpu');
    expect((await check('team-critical', '--fail-on', 'critical')).code).toBe(3);
    expect((await check('team-critical', '--fail-on', 'never')).code).toBe(0);
  });

  it('check reads standard input and prints JSON for pipelines', async () => {
    const manifest = await readFile(path.join(fixtures, 'deployment.yaml'), 'utf8');
    const run = await runForewarn(
      ['check', '-f', '-', '--manifests', path.join(fixtures, 'cluster'), '-n', 'team-warn', '-o', 'json'],
      { input: manifest },
    );
    expect(run.code).toBe(1);
    const output = JSON.parse(run.stdout) as CheckOutput;
    expect(output).toMatchObject({ criticalCount: 0, warningCount: 1 });
    expect(output.reports[0]).toMatchObject({
      file: '<stdin>',
      objects: [{ kind: 'Deployment', namespace: 'team-warn' }],
    });
  });

  it('check against a controller gives the same warnings as offline against the same manifests', async () => {
    const manifest = path.join(fixtures, 'shop.yaml');
    await writeFile(
      manifest,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: api, namespace: shop, annotations: { cert-manager.io/cluster-issuer: letsencrypt } }\nspec:\n  selector: { matchLabels: { app: api } }\n  template:\n    metadata: { labels: { app: api } }\n    spec: { containers: [{ name: api, image: "registry.example.com/api:1" }] }\n',
    );
    const online = await runForewarn(['check', '-f', manifest, '--url', url, '-o', 'json']);
    const offline = await runForewarn(['check', '-f', manifest, '--manifests', DEMO_MANIFESTS, '-o', 'json']);
    expect(online.code).toBe(offline.code);
    expect([1, 3]).toContain(online.code);
    const warningsOf = (run: { stdout: string }) =>
      (JSON.parse(run.stdout) as CheckOutput).reports[0].objects[0].warnings;
    expect(warningsOf(online)).toEqual(warningsOf(offline));
    // What rejects or warns about this object only: the namespace's network rules are not warnings.
    expect(warningsOf(online).length).toBeGreaterThan(2);
    // The companion check travels with the query, as the webhook sends it.
    expect(
      warningsOf(online).filter((warning) => warning.includes('clusterissuers.cert-manager.io')),
    ).toHaveLength(1);
  });

  it('a broken manifest gives its file and line on stderr and exit 2', async () => {
    const broken = path.join(fixtures, 'broken.yaml');
    const run = await runForewarn(['check', '-f', broken, '--manifests', path.join(fixtures, 'cluster')]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^error: ${broken.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:7: `));
    const missingFile = await runForewarn([
      'check',
      '-f',
      path.join(fixtures, 'nope.yaml'),
      '--manifests',
      fixtures,
    ]);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toMatch(/nope\.yaml: no such file or directory/);
  });
});
